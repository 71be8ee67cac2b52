/**
 * The StatefulSet controller in process: pods named by ordinal and made one
 * at a time as each becomes ready, their claims made first, removed from
 * the highest ordinal down, a rolling update through ControllerRevisions
 * honouring the partition, Parallel pods from spec.ordinals.start, and a
 * rollout on simulated nodes under RBAC.
 */
import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import type { ApiServer } from '../../core/index.js'
import type { KubeObject } from '../../core/machinery/object.js'
import { pods } from '../../core/resources/core/pods.js'
import { persistentVolumeClaims } from '../../core/resources/core/volumes.js'
import { resourceQuotas } from '../../core/resources/core/quotas.js'
import { controllerRevisions, statefulSets } from '../../core/resources/groups/apps.js'
import { eventsAbout, markReady, podsOf, readinessWriter } from './controller-pods.js'
import { createTestServer, untilPasses } from './harness.js'

const servers: ApiServer[] = []
after(() => Promise.all(servers.map((s) => s.shutdown())))

async function serverWith(options: Parameters<typeof createTestServer>[0] = {}): Promise<ApiServer> {
  const server = createTestServer({ controllers: ['statefulset'], ...options })
  servers.push(server)
  await server.ready
  return server
}

function statefulSet(name: string, replicas: number, extra: Record<string, unknown> = {}, podMeta: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name },
    spec: {
      replicas,
      serviceName: 'nginx',
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name }, ...podMeta }, spec: { containers: [{ name: 'nginx', image: 'nginx:1.25' }] } },
      ...extra,
    },
  }
}

const statusOf = (o: KubeObject): Record<string, any> => (o['status'] as Record<string, any>) ?? {}
const getSet = (server: ApiServer, name: string) => server.client.get(statefulSets, 'default', name)
const names = (list: KubeObject[]): string[] => list.map((p) => p.metadata.name!).sort()
const revisionOf = (pod: KubeObject): string => pod.metadata.labels?.['controller-revision-hash'] ?? ''

async function changeSpec(server: ApiServer, name: string, change: (spec: Record<string, any>) => void): Promise<void> {
  await untilPasses(async () => {
    const current = await getSet(server, name)
    const spec = structuredClone(current['spec']) as Record<string, any>
    change(spec)
    await server.client.update(statefulSets, 'default', { ...current, spec })
  })
}

describe('StatefulSet controller', () => {
  it('makes pods in ordinal order, each after the one before is ready, with its claim made first', async () => {
    const server = await serverWith()
    const claimTemplate = { metadata: { name: 'www', labels: { tier: 'data' } }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }
    const set = await server.client.create(statefulSets, 'default', statefulSet('web', 3, { volumeClaimTemplates: [claimTemplate] }))

    await untilPasses(async () => {
      assert.deepEqual(names(await podsOf(server, 'default', 'app=web')), ['web-0'])
      assert.equal(statusOf(await getSet(server, 'web'))['replicas'], 1)
    })
    const status = statusOf(await getSet(server, 'web'))
    const revision = status['updateRevision'] as string
    assert.match(revision, /^web-[bcdfghjklmnpqrstvwxz2456789]+$/)
    assert.deepEqual(status, { observedGeneration: 1, replicas: 1, currentReplicas: 1, updatedReplicas: 1, currentRevision: revision, updateRevision: revision, collisionCount: 0, availableReplicas: 0 })

    const web0 = await server.client.get(pods, 'default', 'web-0')
    assert.deepEqual(web0.metadata.labels, {
      app: 'web',
      'statefulset.kubernetes.io/pod-name': 'web-0',
      'apps.kubernetes.io/pod-index': '0',
      'controller-revision-hash': revision,
    })
    assert.equal(web0.metadata.generateName, 'web-')
    assert.deepEqual(web0.metadata.ownerReferences, [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: set.metadata.uid, controller: true, blockOwnerDeletion: true }])
    const podSpec = web0['spec'] as Record<string, any>
    assert.equal(podSpec['hostname'], 'web-0')
    assert.equal(podSpec['subdomain'], 'nginx')
    assert.deepEqual(podSpec['volumes'][0], { name: 'www', persistentVolumeClaim: { claimName: 'www-web-0' } })

    const claim = await server.client.get(persistentVolumeClaims, 'default', 'www-web-0')
    assert.deepEqual(claim.metadata.labels, { tier: 'data', app: 'web' })
    assert.deepEqual(claim.metadata.ownerReferences ?? [], [], 'Retain: the claim is nobody’s')
    assert.deepEqual((claim['spec'] as Record<string, any>)['resources'], { requests: { storage: '1Gi' } })

    const revisions = (await server.client.list(controllerRevisions, 'default')).items
    assert.equal(revisions.length, 1)
    assert.equal(revisions[0]!.metadata.name, revision)
    assert.equal(revisions[0]!['revision'], 1)
    assert.equal(revisions[0]!.metadata.labels?.['controller.kubernetes.io/hash'], revision.slice('web-'.length))
    assert.equal(revisions[0]!.metadata.ownerReferences?.[0]?.uid, set.metadata.uid)
    const stored = (revisions[0]!['data'] as Record<string, any>)['spec']['template']
    assert.equal(stored['$patch'], 'replace')
    assert.equal(stored['spec']['containers'][0]['image'], 'nginx:1.25')

    // The next ordinal waits for the one before to be Running and Ready.
    assert.deepEqual(names(await podsOf(server, 'default', 'app=web')), ['web-0'])
    await markReady(server, web0)
    await untilPasses(async () => assert.deepEqual(names(await podsOf(server, 'default', 'app=web')), ['web-0', 'web-1']))
    assert.equal((await server.client.get(persistentVolumeClaims, 'default', 'www-web-1')).metadata.name, 'www-web-1')
    await markReady(server, await server.client.get(pods, 'default', 'web-1'))
    await untilPasses(async () => assert.deepEqual(names(await podsOf(server, 'default', 'app=web')), ['web-0', 'web-1', 'web-2']))
    await markReady(server, await server.client.get(pods, 'default', 'web-2'))
    await untilPasses(async () => {
      assert.deepEqual(statusOf(await getSet(server, 'web')), {
        observedGeneration: 1,
        replicas: 3,
        readyReplicas: 3,
        currentReplicas: 3,
        updatedReplicas: 3,
        currentRevision: revision,
        updateRevision: revision,
        collisionCount: 0,
        availableReplicas: 3,
      })
    })

    const events = await eventsAbout(server, 'default', 'web')
    const created = events.filter((e) => e.reason === 'SuccessfulCreate').map((e) => e.message)
    assert.deepEqual(created.sort(), [
      'create Claim www-web-0 Pod web-0 in StatefulSet web success',
      'create Claim www-web-1 Pod web-1 in StatefulSet web success',
      'create Claim www-web-2 Pod web-2 in StatefulSet web success',
      'create Pod web-0 in StatefulSet web successful',
      'create Pod web-1 in StatefulSet web successful',
      'create Pod web-2 in StatefulSet web successful',
    ])
    assert.equal(events.find((e) => e.reason === 'SuccessfulCreate')!.source?.component, 'statefulset-controller')
  })

  it('scales down from the highest ordinal, one pod at a time, and keeps the claims', async () => {
    const server = await serverWith()
    const hold = 'example.com/hold'
    const claimTemplate = { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }
    await server.client.create(statefulSets, 'default', statefulSet('db', 3, { podManagementPolicy: 'Parallel', volumeClaimTemplates: [claimTemplate] }, { finalizers: [hold] }))
    await untilPasses(async () => assert.deepEqual(names(await podsOf(server, 'default', 'app=db')), ['db-0', 'db-1', 'db-2']))
    for (const pod of await podsOf(server, 'default', 'app=db')) await markReady(server, pod)
    await untilPasses(async () => assert.equal(statusOf(await getSet(server, 'db'))['readyReplicas'], 3))
    await changeSpec(server, 'db', (spec) => {
      spec['replicas'] = 1
    })
    // Parallel: both surplus pods go at once.
    await untilPasses(async () => assert.deepEqual(names(await podsOf(server, 'default', 'app=db')), ['db-0']))
    const release = async (name: string): Promise<void> => {
      const pod = await server.client.get(pods, 'default', name)
      await server.client.update(pods, 'default', { ...pod, metadata: { ...pod.metadata, finalizers: [] } })
    }
    await release('db-1')
    await release('db-2')

    await server.client.create(statefulSets, 'default', statefulSet('kv', 3, {}, { finalizers: [hold] }))
    for (const name of ['kv-0', 'kv-1', 'kv-2']) {
      await untilPasses(async () => assert.ok((await podsOf(server, 'default', 'app=kv')).some((p) => p.metadata.name === name)))
      await markReady(server, await server.client.get(pods, 'default', name))
    }
    await untilPasses(async () => assert.equal(statusOf(await getSet(server, 'kv'))['readyReplicas'], 3))
    await changeSpec(server, 'kv', (spec) => {
      spec['replicas'] = 1
    })
    const terminating = async (): Promise<string[]> => names((await server.client.list(pods, 'default', { labelSelector: 'app=kv' })).items.filter((p) => p.metadata.deletionTimestamp))
    // OrderedReady: kv-2 goes first, and kv-1 only once kv-2 is gone.
    await untilPasses(async () => assert.deepEqual(await terminating(), ['kv-2']))
    assert.equal(statusOf(await getSet(server, 'kv'))['replicas'], 3, 'a terminating pod still counts')
    await release('kv-2')
    await untilPasses(async () => assert.deepEqual(await terminating(), ['kv-1']))
    await release('kv-1')
    await untilPasses(async () => {
      assert.deepEqual(names((await server.client.list(pods, 'default', { labelSelector: 'app=kv' })).items), ['kv-0'])
      const status = statusOf(await getSet(server, 'kv'))
      assert.equal(status['replicas'], 1)
      assert.equal(status['readyReplicas'], 1)
    })
    const deleted = (await eventsAbout(server, 'default', 'kv')).filter((e) => e.reason === 'SuccessfulDelete').map((e) => e.message)
    assert.deepEqual(deleted.sort(), ['delete Pod kv-1 in StatefulSet kv successful', 'delete Pod kv-2 in StatefulSet kv successful'])

    // Retain: the claims of the pods scaled away stay.
    assert.deepEqual(names((await server.client.list(persistentVolumeClaims, 'default')).items), ['data-db-0', 'data-db-1', 'data-db-2'])
  })

  it('rolls a template change out from the highest ordinal down to the partition, then to all', async () => {
    const server = await serverWith()
    const kubelet = readinessWriter(server, 'default')
    try {
      await server.client.create(statefulSets, 'default', statefulSet('app', 3))
      await untilPasses(async () => assert.equal(statusOf(await getSet(server, 'app'))['readyReplicas'], 3))
      const first = statusOf(await getSet(server, 'app'))['currentRevision'] as string

      await changeSpec(server, 'app', (spec) => {
        spec['template']['spec']['containers'][0]['image'] = 'nginx:1.26'
        spec['updateStrategy'] = { type: 'RollingUpdate', rollingUpdate: { partition: 2 } }
      })
      let second = ''
      await untilPasses(async () => {
        const status = statusOf(await getSet(server, 'app'))
        second = status['updateRevision']
        assert.notEqual(second, first)
        const byName = Object.fromEntries((await podsOf(server, 'default', 'app=app')).map((p) => [p.metadata.name, p]))
        assert.equal(revisionOf(byName['app-2']), second)
        assert.equal(((byName['app-2']!['spec'] as any).containers[0].image), 'nginx:1.26')
        assert.equal(revisionOf(byName['app-1']), first)
        assert.equal(revisionOf(byName['app-0']), first)
        assert.equal(status['readyReplicas'], 3)
        assert.equal(status['currentRevision'], first)
        assert.equal(status['currentReplicas'], 2)
        assert.equal(status['updatedReplicas'], 1)
      })

      await changeSpec(server, 'app', (spec) => {
        spec['updateStrategy'] = { type: 'RollingUpdate', rollingUpdate: { partition: 0 } }
      })
      await untilPasses(async () => {
        const status = statusOf(await getSet(server, 'app'))
        assert.equal(status['currentRevision'], second)
        assert.equal(status['updateRevision'], second)
        assert.equal(status['updatedReplicas'], 3)
        assert.equal(status['currentReplicas'], 3)
        assert.equal(status['readyReplicas'], 3)
        for (const pod of await podsOf(server, 'default', 'app=app')) assert.equal(revisionOf(pod), second)
      })
      const revisions = (await server.client.list(controllerRevisions, 'default')).items.map((r) => [r.metadata.name, r['revision']]).sort()
      assert.deepEqual(revisions, [[first, 1], [second, 2]].sort())
      const deleted = (await eventsAbout(server, 'default', 'app')).filter((e) => e.reason === 'SuccessfulDelete').map((e) => e.message)
      assert.deepEqual(deleted.sort(), ['app-0', 'app-1', 'app-2'].map((n) => `delete Pod ${n} in StatefulSet app successful`))

      // Back to the first template: its revision is reused, renumbered 3.
      await changeSpec(server, 'app', (spec) => {
        spec['template']['spec']['containers'][0]['image'] = 'nginx:1.25'
      })
      await untilPasses(async () => {
        const status = statusOf(await getSet(server, 'app'))
        assert.equal(status['updateRevision'], first)
        assert.equal(status['currentRevision'], first)
        const stored = await server.client.get(controllerRevisions, 'default', first)
        assert.equal(stored['revision'], 3)
      })
    } finally {
      kubelet.stop()
    }
  })

  it('makes Parallel pods all at once from spec.ordinals.start, and OnDelete replaces only deleted pods', async () => {
    const server = await serverWith()
    await server.client.create(statefulSets, 'default', statefulSet('par', 3, { podManagementPolicy: 'Parallel', ordinals: { start: 5 }, updateStrategy: { type: 'OnDelete' } }))
    await untilPasses(async () => assert.deepEqual(names(await podsOf(server, 'default', 'app=par')), ['par-5', 'par-6', 'par-7']))
    const pod = await server.client.get(pods, 'default', 'par-6')
    assert.equal(pod.metadata.labels?.['apps.kubernetes.io/pod-index'], '6')
    const first = revisionOf(pod)

    await changeSpec(server, 'par', (spec) => {
      spec['template']['metadata']['labels']['version'] = 'two'
    })
    await untilPasses(async () => assert.notEqual(statusOf(await getSet(server, 'par'))['updateRevision'], first))
    const second = statusOf(await getSet(server, 'par'))['updateRevision']
    await server.client.delete(pods, 'default', 'par-6')
    await untilPasses(async () => {
      const byName = Object.fromEntries((await podsOf(server, 'default', 'app=par')).map((p) => [p.metadata.name, p]))
      assert.equal(revisionOf(byName['par-6']), second)
      assert.equal(byName['par-6']!.metadata.labels?.['version'], 'two')
      assert.equal(revisionOf(byName['par-5']), first)
      assert.equal(revisionOf(byName['par-7']), first)
      const status = statusOf(await getSet(server, 'par'))
      assert.equal(status['currentReplicas'], 2)
      assert.equal(status['updatedReplicas'], 1)
    })
  })

  it('survives a set of ten million replicas: only the pods a pass reaches are made', async () => {
    const server = await serverWith()
    // Every missing replica had been made up front, on every pass: ten million ran the server out of memory.
    await server.client.create(statefulSets, 'default', statefulSet('huge', 10_000_000))
    await untilPasses(async () => assert.deepEqual(names(await podsOf(server, 'default', 'app=huge')), ['huge-0']))
    await untilPasses(async () => assert.equal(statusOf(await getSet(server, 'huge'))['replicas'], 1))
    await markReady(server, await server.client.get(pods, 'default', 'huge-0'))
    await untilPasses(async () => assert.deepEqual(names(await podsOf(server, 'default', 'app=huge')), ['huge-0', 'huge-1']))
  })

  it('makes the pods of a Parallel set in slow-start batches, stopping at a refusal, and at most 500 a pass', async () => {
    const server = await serverWith({ admission: { plugins: ['ResourceQuota'] } })
    await server.client.create(resourceQuotas, 'default', { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'five' }, spec: { hard: { pods: '5' } } })
    await untilPasses(async () => assert.ok(statusOf(await server.client.get(resourceQuotas, 'default', 'five'))['hard']))
    await server.client.create(statefulSets, 'default', statefulSet('wide', 2000, { podManagementPolicy: 'Parallel' }))
    await untilPasses(async () => assert.equal((await podsOf(server, 'default', 'app=wide')).length, 5))
    await untilPasses(async () => assert.ok((await eventsAbout(server, 'default', 'wide')).some((e) => e.reason === 'FailedCreate')))
    // Each pass stops after the batch where the quota refused: a few refusals, not one for each of the 1,995 missing pods.
    const refused = (await eventsAbout(server, 'default', 'wide')).filter((e) => e.reason === 'FailedCreate')
    assert.ok(refused.length < 50, `${refused.length} FailedCreate events`)
    await server.client.delete(resourceQuotas, 'default', 'five')
    // Past the quota, the rest comes in passes of at most 500 pods.
    await untilPasses(async () => assert.equal((await podsOf(server, 'default', 'app=wide')).length, 2000), 60_000)
  })

  it('hands claims to the set or to the pod scaled away as persistentVolumeClaimRetentionPolicy says', async () => {
    const server = await serverWith()
    const claimTemplate = { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }
    const policy = { whenDeleted: 'Delete', whenScaled: 'Delete' }
    const set = await server.client.create(
      statefulSets,
      'default',
      statefulSet('ret', 2, { podManagementPolicy: 'Parallel', volumeClaimTemplates: [claimTemplate], persistentVolumeClaimRetentionPolicy: policy }),
    )
    const claimOwner = async (name: string) => (await server.client.get(persistentVolumeClaims, 'default', name)).metadata.ownerReferences
    await untilPasses(async () => {
      assert.deepEqual(names(await podsOf(server, 'default', 'app=ret')), ['ret-0', 'ret-1'])
      for (const name of ['data-ret-0', 'data-ret-1'])
        assert.deepEqual(await claimOwner(name), [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'ret', uid: set.metadata.uid, controller: true, blockOwnerDeletion: true }])
    })
    await changeSpec(server, 'ret', (spec) => {
      spec['replicas'] = 1
    })
    // The claim of the pod scaled away goes with it; the other stays with the set.
    await untilPasses(async () => {
      assert.deepEqual(names(await podsOf(server, 'default', 'app=ret')), ['ret-0'])
      assert.deepEqual(names((await server.client.list(persistentVolumeClaims, 'default')).items), ['data-ret-0'])
    })
    await server.client.delete(statefulSets, 'default', 'ret')
    await untilPasses(async () => assert.deepEqual((await server.client.list(persistentVolumeClaims, 'default')).items, []))
  })

  it('rolls out on simulated nodes under RBAC until ready and at one revision', async () => {
    const server = await serverWith({ nodes: 2, authorizationModes: ['Node', 'RBAC'] })
    const claimTemplate = { metadata: { name: 'www' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }
    await server.client.create(statefulSets, 'default', statefulSet('sim', 3, { volumeClaimTemplates: [claimTemplate] }))
    await untilPasses(async () => {
      const set = await getSet(server, 'sim')
      const status = statusOf(set)
      assert.equal(status['observedGeneration'], set.metadata.generation)
      assert.equal(status['readyReplicas'], 3)
      assert.equal(status['currentRevision'], status['updateRevision'])
    })
    const running = (await podsOf(server, 'default', 'app=sim')).filter((p) => (p['status'] as any)?.phase === 'Running')
    assert.deepEqual(names(running), ['sim-0', 'sim-1', 'sim-2'])
    assert.equal((await server.client.list(persistentVolumeClaims, 'default')).items.length, 3)
  })
})
