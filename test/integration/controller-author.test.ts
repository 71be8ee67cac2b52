/**
 * A test as a controller author writes one against the in-process server
 * with its workload controllers: define a CRD, create a custom object and a
 * Deployment, wait for the Deployment to be available, delete the
 * namespace and see everything in it go. The test plays the kubelet: it
 * marks each pod Running and Ready, and removes pods whose deletion began.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { ObjectClient } from '../../core/client/object-client.js'
import type { KubeObject } from '../../core/machinery/object.js'
import { hasStatusCode } from '../../core/machinery/status-error.js'
import { deployments, replicaSets } from '../../core/resources/groups/apps.js'
import { customResourceDefinitions } from '../../core/resources/groups/apiextensions.js'
import { namespaces } from '../../core/resources/core/namespaces.js'
import { pods } from '../../core/resources/core/pods.js'
import { createApiServer } from '../../core/server.js'

const widgets = { group: 'example.com', version: 'v1', resource: 'widgets', namespaced: true }

const WIDGET_CRD: KubeObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
  },
}

const WEB: KubeObject = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web' },
  spec: {
    replicas: 3,
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'nginx', image: 'nginx' }] } },
  },
}

/** Polls `check` until it holds (each poll a few event-loop turns apart); fails naming `what`. */
async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 1500; i++) {
    if (await check()) return
    await new Promise((r) => setTimeout(r, 10))
  }
  assert.fail(`gave up waiting: ${what}`)
}

/** What a kubelet would do for the pods of `namespace`: start them, and finish their deletion. */
function playKubelet(client: ObjectClient, namespace: string): () => void {
  let stopped = false
  void (async () => {
    while (!stopped) {
      for (const pod of (await client.list(pods, namespace)).items) {
        try {
          if (pod.metadata.deletionTimestamp) await client.delete(pods, namespace, pod.metadata.name!, { gracePeriodSeconds: 0 })
          else if ((pod['status'] as { phase?: string } | undefined)?.phase !== 'Running') {
            const now = new Date().toISOString()
            await client.updateStatus(pods, namespace, {
              ...pod,
              status: {
                phase: 'Running',
                podIP: '10.0.0.1',
                conditions: ['Initialized', 'ContainersReady', 'Ready'].map((type) => ({ type, status: 'True', lastTransitionTime: now })),
                containerStatuses: [{ name: 'nginx', image: 'nginx', imageID: '', ready: true, started: true, restartCount: 0, state: { running: { startedAt: now } } }],
              },
            })
          }
        } catch (err) {
          // The pod changed or went meanwhile: the next pass sees it as it is.
          if (!hasStatusCode(err, 404) && !hasStatusCode(err, 409)) throw err
        }
      }
      await new Promise((r) => setTimeout(r, 5))
    }
  })()
  return () => {
    stopped = true
  }
}

describe('a controller author’s test against the in-process server', () => {
  it('defines a CRD, rolls out a Deployment on simulated nodes, and deleting the namespace takes everything in it', async () => {
    const server = createApiServer({ controllers: ['*'], nodes: 3 })
    await server.ready
    await authorsSteps(server.client)
    await server.shutdown()
  })

  it('does the same with the test playing the kubelet, without simulated nodes', async () => {
    const server = createApiServer({ controllers: ['*'] })
    await server.ready
    const stopKubelet = playKubelet(server.client, 'team')
    try {
      await authorsSteps(server.client)
    } finally {
      stopKubelet()
      await server.shutdown()
    }
  })
})

/** The steps of the author's test, whoever runs the pods. */
async function authorsSteps(client: ObjectClient): Promise<void> {
  await client.create(customResourceDefinitions, '', WIDGET_CRD)
  await until('the CRD to be established', async () => {
    const crd = await client.get(customResourceDefinitions, '', 'widgets.example.com')
    return ((crd['status'] as { conditions?: { type: string; status: string }[] })?.conditions ?? []).some((c) => c.type === 'Established' && c.status === 'True')
  })
  await client.create(namespaces, '', { metadata: { name: 'team' } })
  await client.create(widgets, 'team', { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'gadget' }, spec: { size: 3 } })
  await client.create(deployments, 'team', WEB)

  await until('the Deployment to be available', async () => {
    const web = await client.get(deployments, 'team', 'web')
    const status = (web['status'] ?? {}) as { availableReplicas?: number; updatedReplicas?: number; conditions?: { type: string; status: string }[] }
    return status.availableReplicas === 3 && status.updatedReplicas === 3 && (status.conditions ?? []).some((c) => c.type === 'Available' && c.status === 'True')
  })
  assert.equal((await client.list(pods, 'team')).items.length, 3)
  assert.equal((await client.list(replicaSets, 'team')).items.length, 1)

  await client.delete(namespaces, '', 'team')
  await until('the namespace to be gone', async () => {
    try {
      await client.get(namespaces, '', 'team')
      return false
    } catch (err) {
      if (hasStatusCode(err, 404)) return true
      throw err
    }
  })
  for (const resource of [pods, replicaSets, deployments, widgets]) {
    assert.deepEqual((await client.list(resource, 'team')).items, [], `no ${resource.resource} left in the namespace`)
  }
}
