/**
 * The ReplicaSet and ReplicationController controllers in process: pods made
 * from the template and owned, counted in status as they become ready,
 * surplus pods deleted not-ready first, orphans adopted and pods that stop
 * matching released, a refused create reported, and everything collected
 * when the owner goes.
 */
import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import type { ApiServer } from '../../core/index.js'
import type { KubeObject } from '../../core/machinery/object.js'
import { pods } from '../../core/resources/core/pods.js'
import { replicationControllers } from '../../core/resources/core/replication.js'
import { replicaSets } from '../../core/resources/groups/apps.js'
import { eventsAbout, markReady, podsOf } from './controller-pods.js'
import { createTestServer, untilPasses } from './harness.js'

const servers: ApiServer[] = []
after(() => Promise.all(servers.map((s) => s.shutdown())))

async function serverWith(options: Parameters<typeof createTestServer>[0] = {}): Promise<ApiServer> {
  const server = createTestServer({ controllers: ['replicaset', 'replicationcontroller'], ...options })
  servers.push(server)
  await server.ready
  return server
}

const template = (labels: Record<string, string>) => ({ metadata: { labels }, spec: { containers: [{ name: 'web', image: 'nginx:1.25' }] } })

function replicaSet(name: string, replicas: number, extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name },
    spec: { replicas, selector: { matchLabels: { app: name } }, template: template({ app: name, tier: 'front' }), ...extra },
  }
}

const getRS = (server: ApiServer, name: string) => server.client.get(replicaSets, 'default', name)
const statusOf = (o: KubeObject): Record<string, any> => (o['status'] as Record<string, any>) ?? {}

describe('ReplicaSet controller', () => {
  it('makes owned, labelled pods, counts them ready, and deletes not-ready pods first on scale-down', async () => {
    const server = await serverWith()
    const rs = await server.client.create(replicaSets, 'default', replicaSet('web', 3))

    await untilPasses(async () => assert.equal((await podsOf(server, 'default', 'app=web')).length, 3))
    const made = await podsOf(server, 'default', 'app=web')
    for (const pod of made) {
      assert.match(pod.metadata.name!, /^web-[a-z0-9]{5}$/)
      assert.deepEqual(pod.metadata.labels, { app: 'web', tier: 'front' })
      assert.deepEqual(pod.metadata.ownerReferences, [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: rs.metadata.uid, controller: true, blockOwnerDeletion: true }])
    }
    await untilPasses(async () => {
      const status = statusOf(await getRS(server, 'web'))
      assert.deepEqual(status, { replicas: 3, fullyLabeledReplicas: 3, observedGeneration: 1 })
    })

    await markReady(server, made[0]!)
    await markReady(server, made[1]!)
    await untilPasses(async () => {
      const status = statusOf(await getRS(server, 'web'))
      assert.equal(status['readyReplicas'], 2)
      assert.equal(status['availableReplicas'], 2)
    })

    const current = await getRS(server, 'web')
    await server.client.update(replicaSets, 'default', { ...current, spec: { ...(current['spec'] as object), replicas: 1 } })
    await untilPasses(async () => {
      const left = await podsOf(server, 'default', 'app=web')
      assert.equal(left.length, 1)
      assert.ok([made[0]!.metadata.name, made[1]!.metadata.name].includes(left[0]!.metadata.name), 'a ready pod stays')
      assert.deepEqual(statusOf(await getRS(server, 'web')), { replicas: 1, fullyLabeledReplicas: 1, readyReplicas: 1, availableReplicas: 1, observedGeneration: 2 })
    })
    assert.ok(!(await podsOf(server, 'default', 'app=web')).some((p) => p.metadata.name === made[2]!.metadata.name), 'the not-ready pod went first')

    const events = await eventsAbout(server, 'default', 'web')
    assert.equal(events.filter((e) => e.reason === 'SuccessfulCreate').length, 3)
    assert.match(events.find((e) => e.reason === 'SuccessfulCreate')!.message, /^Created pod: web-[a-z0-9]{5}$/)
    assert.equal(events.filter((e) => e.reason === 'SuccessfulDelete').length, 2)
    assert.equal(events.find((e) => e.reason === 'SuccessfulDelete')!.source?.component, 'replicaset-controller')
    assert.match(events.find((e) => e.reason === 'SuccessfulDelete')!.message, /^Deleted pod: web-[a-z0-9]{5}$/)
  })

  it('adopts a matching orphan, releases a pod relabelled away, and its pods go with it', async () => {
    const server = await serverWith()
    await server.client.create(pods, 'default', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'stray', labels: { app: 'api' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } })
    const rs = await server.client.create(replicaSets, 'default', replicaSet('api', 2))
    await untilPasses(async () => {
      const owned = await podsOf(server, 'default', 'app=api')
      assert.equal(owned.length, 2)
      const stray = owned.find((p) => p.metadata.name === 'stray')
      assert.equal(stray?.metadata.ownerReferences?.[0]?.uid, rs.metadata.uid, 'the orphan is adopted')
    })

    const stray = await server.client.get(pods, 'default', 'stray')
    await server.client.update(pods, 'default', { ...stray, metadata: { ...stray.metadata, labels: { app: 'elsewhere' } } })
    await untilPasses(async () => {
      const released = await server.client.get(pods, 'default', 'stray')
      assert.deepEqual(released.metadata.ownerReferences ?? [], [])
      assert.equal((await podsOf(server, 'default', 'app=api')).length, 2, 'a replacement is made')
    })

    await server.client.delete(replicaSets, 'default', 'api')
    await untilPasses(async () => assert.equal((await podsOf(server, 'default', 'app=api')).length, 0))
    assert.equal((await server.client.get(pods, 'default', 'stray')).metadata.name, 'stray', 'the released pod stays')
  })

  it('reports a create the quota refuses as ReplicaFailure and a FailedCreate event', async () => {
    const server = await serverWith({ admission: { plugins: ['ResourceQuota'] } })
    const { resourceQuotas } = await import('../../core/resources/core/quotas.js')
    await server.client.create(resourceQuotas, 'default', { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'pods' }, spec: { hard: { pods: '1' } } })
    await untilPasses(async () => assert.ok(statusOf(await server.client.get(resourceQuotas, 'default', 'pods'))['used']))
    await server.client.create(replicaSets, 'default', replicaSet('full', 2))
    await untilPasses(async () => {
      const failure = (statusOf(await getRS(server, 'full'))['conditions'] ?? []).find((c: any) => c.type === 'ReplicaFailure')
      assert.equal(failure?.status, 'True')
      assert.equal(failure?.reason, 'FailedCreate')
      assert.match(failure?.message, /exceeded quota: pods/)
      const refused = (await eventsAbout(server, 'default', 'full')).find((e) => e.reason === 'FailedCreate')
      assert.equal(refused?.type, 'Warning')
      assert.match(refused!.message, /^Error creating: pods "full-.*" is forbidden: exceeded quota: pods/)
    })
    assert.equal((await podsOf(server, 'default', 'app=full')).length, 1)
  })

  it('counts a ready pod available only once it has been ready for minReadySeconds', async () => {
    const server = await serverWith()
    await server.client.create(replicaSets, 'default', replicaSet('slow', 1, { minReadySeconds: 3600 }))
    await untilPasses(async () => assert.equal((await podsOf(server, 'default', 'app=slow')).length, 1))
    const [pod] = await podsOf(server, 'default', 'app=slow')
    await markReady(server, pod!)
    await untilPasses(async () => assert.equal(statusOf(await getRS(server, 'slow'))['readyReplicas'], 1))
    assert.equal(statusOf(await getRS(server, 'slow'))['availableReplicas'], undefined, 'ready for less than an hour: not available')

    // A shorter minReadySeconds: the controller looks again once it has passed.
    const rs = await getRS(server, 'slow')
    await server.client.update(replicaSets, 'default', { ...rs, spec: { ...(rs['spec'] as object), minReadySeconds: 1 } })
    await untilPasses(async () => assert.equal(statusOf(await getRS(server, 'slow'))['availableReplicas'], 1))
  })

  it('works under RBAC as the replicaset-controller service account', async () => {
    const server = await serverWith({ authorizationModes: ['RBAC'] })
    await server.client.create(replicaSets, 'default', replicaSet('rbac', 2))
    await untilPasses(async () => {
      assert.equal((await podsOf(server, 'default', 'app=rbac')).length, 2)
      assert.equal(statusOf(await getRS(server, 'rbac'))['replicas'], 2)
    })
  })
})

describe('ReplicationController controller', () => {
  it('keeps a ReplicationController at its size with a plain selector', async () => {
    const server = await serverWith({ authorizationModes: ['RBAC'] })
    const rc = await server.client.create(replicationControllers, 'default', {
      apiVersion: 'v1',
      kind: 'ReplicationController',
      metadata: { name: 'legacy' },
      spec: { replicas: 2, selector: { app: 'legacy' }, template: template({ app: 'legacy' }) },
    })
    await untilPasses(async () => {
      const made = await podsOf(server, 'default', 'app=legacy')
      assert.equal(made.length, 2)
      assert.equal(made[0]!.metadata.ownerReferences?.[0]?.kind, 'ReplicationController')
      assert.equal(made[0]!.metadata.ownerReferences?.[0]?.uid, rc.metadata.uid)
      assert.equal(statusOf(await server.client.get(replicationControllers, 'default', 'legacy'))['replicas'], 2)
    })
    const [first] = await podsOf(server, 'default', 'app=legacy')
    await server.client.delete(pods, 'default', first!.metadata.name!)
    await untilPasses(async () => {
      const made = await podsOf(server, 'default', 'app=legacy')
      assert.equal(made.length, 2)
      assert.ok(!made.some((p) => p.metadata.name === first!.metadata.name), 'a deleted pod is replaced')
    })
  })
})
