/**
 * What an operator's test suite does: start the server in process, install
 * its CustomResourceDefinition with @kubernetes/client-node, run a tiny
 * controller (a watch that writes each object's status) and check what the
 * controller did, all through the real client over loopback TLS.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ApiextensionsV1Api, CustomObjectsApi, KubeConfig, type V1CustomResourceDefinition, Watch } from '@kubernetes/client-node'
import { listen } from '../../runtimes/node/index.js'
import { createTestServer } from './harness.js'

const group = 'demo.example.com'
const version = 'v1'
const plural = 'widgets'
const namespace = 'default'

const definition: V1CustomResourceDefinition = {
  metadata: { name: `${plural}.${group}` },
  spec: {
    group,
    scope: 'Namespaced',
    names: { plural, singular: 'widget', kind: 'Widget' },
    versions: [
      {
        name: version,
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: { type: 'object', properties: { size: { type: 'integer', minimum: 1 } }, required: ['size'] },
              status: { type: 'object', properties: { phase: { type: 'string' }, observedGeneration: { type: 'integer' } } },
            },
          },
        },
      },
    ],
  },
}

type Widget = { apiVersion: string; kind: string; metadata: { name: string; generation?: number; resourceVersion?: string }; spec: { size: number }; status?: { phase?: string; observedGeneration?: number } }

async function until<T>(what: string, probe: () => Promise<T | undefined>, deadlineMs = 10_000): Promise<T> {
  const end = Date.now() + deadlineMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > end) assert.fail(`timed out waiting until ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

describe('a controller for a custom resource, tested in process with client-node', () => {
  it('installs its CRD, watches its objects and writes their status', async () => {
    const server = createTestServer()
    await server.ready
    const listening = await listen(server)
    const kc = new KubeConfig()
    kc.loadFromString(listening.kubeconfig)
    const extensions = kc.makeApiClient(ApiextensionsV1Api)
    const objects = kc.makeApiClient(CustomObjectsApi)
    let stopWatch = (): void => {}
    try {
      await extensions.createCustomResourceDefinition({ body: definition })
      await until('the CRD is established', async () => {
        const crd = await extensions.readCustomResourceDefinition({ name: `${plural}.${group}` })
        return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ? crd : undefined
      })

      // The controller: every Widget whose status lags its generation gets phase Ready at that generation.
      const reconcile = async (widget: Widget): Promise<void> => {
        if (widget.status?.observedGeneration === widget.metadata.generation) return
        const status = { phase: 'Ready', observedGeneration: widget.metadata.generation }
        await objects.replaceNamespacedCustomObjectStatus({ group, version, namespace, plural, name: widget.metadata.name, body: { ...widget, status } })
      }
      const failures: unknown[] = []
      const request = await new Watch(kc).watch(
        `/apis/${group}/${version}/namespaces/${namespace}/${plural}`,
        {},
        (phase: string, widget: Widget) => {
          if (phase === 'ADDED' || phase === 'MODIFIED') reconcile(widget).catch((err: unknown) => failures.push(err))
        },
        () => {},
      )
      stopWatch = () => request.abort()

      await objects.createNamespacedCustomObject({
        group,
        version,
        namespace,
        plural,
        body: { apiVersion: `${group}/${version}`, kind: 'Widget', metadata: { name: 'first' }, spec: { size: 3 } },
      })
      const ready = await until('the controller set the status', async () => {
        const w = (await objects.getNamespacedCustomObject({ group, version, namespace, plural, name: 'first' })) as Widget
        return w.status?.phase === 'Ready' ? w : undefined
      })
      assert.equal(ready.status?.observedGeneration, 1)

      // A change of the spec is a new generation, which the controller catches up with.
      await objects.patchNamespacedCustomObject({ group, version, namespace, plural, name: 'first', body: [{ op: 'replace', path: '/spec/size', value: 5 }] })
      const caughtUp = await until('the controller saw generation 2', async () => {
        const w = (await objects.getNamespacedCustomObject({ group, version, namespace, plural, name: 'first' })) as Widget
        return w.status?.observedGeneration === 2 ? w : undefined
      })
      assert.equal(caughtUp.spec.size, 5)

      // The schema still holds through the client: a size of 0 is refused with the field named.
      await assert.rejects(
        objects.createNamespacedCustomObject({
          group,
          version,
          namespace,
          plural,
          body: { apiVersion: `${group}/${version}`, kind: 'Widget', metadata: { name: 'bad' }, spec: { size: 0 } },
        }),
        (err: { code?: number; body?: string }) => err.code === 422 && /spec\.size/.test(String(err.body)),
      )
      assert.deepEqual(failures, [])
    } finally {
      stopWatch()
      await listening.close()
      await server.shutdown()
    }
  })
})
