/**
 * The DaemonSet controller in process: a pod for each node the template
 * fits (nodeSelector, taints and tolerations), pinned to its node by a
 * required node affinity on its name; nodes added get one and nodes that
 * stop fitting lose theirs; failed pods are replaced; a template change
 * rolls out node by node under RollingUpdate and waits for deletions under
 * OnDelete, each template kept as a ControllerRevision; status counted as
 * upstream counts it. Then on simulated nodes, where the scheduler binds
 * the pods and the kubelet runs them.
 */
import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import type { ApiServer } from '../../core/index.js'
import type { KubeObject } from '../../core/machinery/object.js'
import { nodes } from '../../core/resources/core/nodes.js'
import { pods } from '../../core/resources/core/pods.js'
import { controllerRevisions, daemonSets } from '../../core/resources/groups/apps.js'
import { goJson } from '../../core/controllers/workloads/revision-patch.js'
import { eventsAbout, markReady, podsOf, readinessWriter } from './controller-pods.js'
import { createTestServer, untilPasses } from './harness.js'

const servers: ApiServer[] = []
const writers: { stop(): void }[] = []
after(async () => {
  for (const w of writers) w.stop()
  await Promise.all(servers.map((s) => s.shutdown()))
})

async function serverWith(options: Parameters<typeof createTestServer>[0] = {}): Promise<ApiServer> {
  const server = createTestServer({ controllers: ['daemonset'], ...options })
  servers.push(server)
  await server.ready
  return server
}

/** One server for several cases (each with DaemonSets of its own names): a server takes a while to start. */
const shared = new Map<string, Promise<ApiServer>>()
function sharedServer(name: string, setUp: (server: ApiServer) => Promise<void>): Promise<ApiServer> {
  if (!shared.has(name)) shared.set(name, serverWith().then(async (server) => (await setUp(server), server)))
  return shared.get(name)!
}

type Taint = { key: string; value?: string; effect: string }

/** A node as a kubelet registers it, without the not-ready taint the node controller would lift. */
async function addNode(server: ApiServer, name: string, labels: Record<string, string> = {}, taints: Taint[] = []): Promise<void> {
  const created = await server.client.create(nodes, '', { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name, ...labels } } })
  await setNode(server, created.metadata.name!, { taints })
}

async function setNode(server: ApiServer, name: string, change: { labels?: Record<string, string>; taints?: Taint[] }): Promise<void> {
  const node = await server.client.get(nodes, '', name)
  const spec = { ...(node['spec'] as object), taints: change.taints ?? (node['spec'] as { taints?: Taint[] }).taints }
  const metadata = change.labels ? { ...node.metadata, labels: change.labels } : node.metadata
  await server.client.update(nodes, '', { ...node, metadata, spec })
}

function daemonSet(name: string, podSpec: Record<string, unknown> = {}, spec: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name },
    spec: {
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'agent', image: 'agent:1' }], ...podSpec } },
      ...spec,
    },
  }
}

const statusOf = (o: KubeObject): Record<string, unknown> => (o['status'] as Record<string, unknown>) ?? {}
const getDS = (server: ApiServer, name: string) => server.client.get(daemonSets, 'default', name)
const specOf = (pod: KubeObject): Record<string, any> => pod['spec'] as Record<string, any>
/** The node each pod is pinned to, sorted. */
const pinnedNodes = (list: KubeObject[]): string[] =>
  list.map((p) => specOf(p)['affinity'].nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].values[0] as string).sort()

async function updateTemplate(server: ApiServer, name: string, image: string): Promise<void> {
  const ds = await getDS(server, name)
  const spec = structuredClone(ds['spec']) as { template: { spec: { containers: { image: string }[] } } }
  spec.template.spec.containers[0]!.image = image
  await server.client.update(daemonSets, 'default', { ...ds, spec })
}

const threeNodes = () =>
  sharedServer('three nodes', async (server) => {
    for (const name of ['n1', 'n2', 'n3']) await addNode(server, name, name === 'n3' ? {} : { disk: 'ssd' })
  })
/** Pods marked ready as they appear, as kubelets would. */
const threeReadyNodes = () =>
  sharedServer('three ready nodes', async (server) => {
    for (const name of ['r1', 'r2', 'r3']) await addNode(server, name)
    writers.push(readinessWriter(server, 'default'))
  })

// The cases share no object: they run at once, most of their time is spent waiting.
describe('DaemonSet controller', { concurrency: true }, () => {
  it('runs a pod on every node the template fits, pinned to it, and counts them in status', async () => {
    const server = await threeNodes()
    const ds = await server.client.create(daemonSets, 'default', daemonSet('agent'))
    await server.client.create(daemonSets, 'default', daemonSet('ssd', { nodeSelector: { disk: 'ssd' } }))

    await untilPasses(async () => {
      assert.deepEqual(pinnedNodes(await podsOf(server, 'default', 'app=agent')), ['n1', 'n2', 'n3'])
      assert.deepEqual(pinnedNodes(await podsOf(server, 'default', 'app=ssd')), ['n1', 'n2'], 'nodeSelector honoured')
    })
    const [revision] = (await server.client.list(controllerRevisions, 'default', { labelSelector: 'app=agent' })).items
    const hash = revision!.metadata.labels!['controller-revision-hash']!
    assert.equal(revision!.metadata.name, `agent-${hash}`)
    assert.equal(revision!['revision'], 1)
    assert.equal((revision!['data'] as any).spec.template.$patch, 'replace')
    assert.equal(revision!.metadata.ownerReferences?.[0]?.uid, ds.metadata.uid)

    const made = await podsOf(server, 'default', 'app=agent')
    for (const pod of made) {
      assert.match(pod.metadata.name!, /^agent-[a-z0-9]{5}$/)
      assert.deepEqual(pod.metadata.labels, { app: 'agent', 'controller-revision-hash': hash, 'pod-template-generation': '1' })
      assert.deepEqual(pod.metadata.ownerReferences, [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent', uid: ds.metadata.uid, controller: true, blockOwnerDeletion: true }])
      assert.equal(specOf(pod)['nodeName'], undefined, 'left to the scheduler')
      const tolerated = (specOf(pod)['tolerations'] as Taint[]).map((t) => `${t.key}:${t.effect}`)
      for (const key of ['not-ready:NoExecute', 'unreachable:NoExecute', 'disk-pressure:NoSchedule', 'memory-pressure:NoSchedule', 'pid-pressure:NoSchedule', 'unschedulable:NoSchedule'])
        assert.ok(tolerated.includes(`node.kubernetes.io/${key}`), key)
      assert.ok(!tolerated.includes('node.kubernetes.io/network-unavailable:NoSchedule'), 'only for hostNetwork pods')
    }
    await untilPasses(async () =>
      assert.deepEqual(statusOf(await getDS(server, 'agent')), {
        currentNumberScheduled: 3,
        desiredNumberScheduled: 3,
        numberMisscheduled: 0,
        numberReady: 0,
        numberUnavailable: 3,
        observedGeneration: 1,
        updatedNumberScheduled: 3,
      }),
    )
    for (const pod of made) await markReady(server, pod)
    await untilPasses(async () =>
      assert.deepEqual(statusOf(await getDS(server, 'agent')), {
        currentNumberScheduled: 3,
        desiredNumberScheduled: 3,
        numberMisscheduled: 0,
        numberReady: 3,
        numberAvailable: 3,
        observedGeneration: 1,
        updatedNumberScheduled: 3,
      }),
    )
    const events = await eventsAbout(server, 'default', 'agent')
    const created = events.filter((e) => e.reason === 'SuccessfulCreate')
    assert.equal(created.length, 3)
    assert.match(created[0]!.message, /^Created pod: agent-[a-z0-9]{5}$/)
    assert.equal(created[0]!.source?.component, 'daemonset-controller')
  })

  it('gives a new node a pod, keeps off a tainted node, and takes pods off nodes that stop fitting', async () => {
    const server = await serverWith()
    await addNode(server, 'a', { role: 'edge' })
    await addNode(server, 'tainted', { role: 'edge' }, [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }])
    await server.client.create(daemonSets, 'default', daemonSet('edge', { nodeSelector: { role: 'edge' } }))
    await server.client.create(daemonSets, 'default', daemonSet('tolerant', { tolerations: [{ key: 'dedicated', operator: 'Exists' }] }))
    await untilPasses(async () => {
      assert.deepEqual(pinnedNodes(await podsOf(server, 'default', 'app=edge')), ['a'], 'no pod on the tainted node')
      assert.deepEqual(pinnedNodes(await podsOf(server, 'default', 'app=tolerant')), ['a', 'tainted'], 'a toleration lets it on')
      const status = statusOf(await getDS(server, 'edge'))
      assert.equal(status['desiredNumberScheduled'], 1)
    })

    await addNode(server, 'b', { role: 'edge' })
    await untilPasses(async () => assert.deepEqual(pinnedNodes(await podsOf(server, 'default', 'app=edge')), ['a', 'b'], 'the new node gets a pod'))

    // A label gone: the node no longer fits and its pod goes.
    await setNode(server, 'b', { labels: { 'kubernetes.io/hostname': 'b' } })
    // A NoExecute taint not tolerated: the pod there goes too; a NoSchedule one would let it stay.
    await setNode(server, 'a', { taints: [{ key: 'maintenance', effect: 'NoSchedule' }] })
    await setNode(server, 'tainted', { taints: [{ key: 'evict', effect: 'NoExecute' }] })
    await untilPasses(async () => {
      assert.deepEqual(pinnedNodes(await podsOf(server, 'default', 'app=edge')), ['a'])
      assert.deepEqual(pinnedNodes(await podsOf(server, 'default', 'app=tolerant')), ['a', 'b'], 'b still fits a DaemonSet without a nodeSelector')
      assert.deepEqual(statusOf(await getDS(server, 'edge')), {
        currentNumberScheduled: 0,
        desiredNumberScheduled: 0,
        numberMisscheduled: 1,
        numberReady: 0,
        observedGeneration: 1,
      })
    })
    const deleted = (await eventsAbout(server, 'default', 'edge')).filter((e) => e.reason === 'SuccessfulDelete')
    assert.equal(deleted.length, 1)
    assert.match(deleted[0]!.message, /^Deleted pod: edge-[a-z0-9]{5}$/)
  })

  it('replaces a failed pod', async () => {
    const server = await threeNodes()
    await server.client.create(daemonSets, 'default', daemonSet('flaky', { nodeName: 'n1' }))
    await untilPasses(async () => assert.equal((await podsOf(server, 'default', 'app=flaky')).length, 1, 'only on the node the template names'))
    const [first] = await podsOf(server, 'default', 'app=flaky')
    await server.client.updateStatus(pods, 'default', { ...first!, status: { phase: 'Failed' } })
    await untilPasses(async () => {
      const now = await podsOf(server, 'default', 'app=flaky')
      assert.equal(now.length, 1)
      assert.notEqual(now[0]!.metadata.name, first!.metadata.name)
    })
    const failed = (await eventsAbout(server, 'default', 'flaky')).find((e) => e.reason === 'FailedDaemonPod')
    assert.equal(failed?.type, 'Warning')
    assert.equal(failed?.message, `Found failed daemon pod default/${first!.metadata.name} on node n1, will try to kill it`)
  })

  it('rolls a new template out node by node, keeping a revision per template', async () => {
    const server = await threeReadyNodes()
    await server.client.create(daemonSets, 'default', daemonSet('roll'))
    await untilPasses(async () => assert.equal(statusOf(await getDS(server, 'roll'))['numberAvailable'], 3))
    const before = new Set((await podsOf(server, 'default', 'app=roll')).map((p) => p.metadata.name))

    await updateTemplate(server, 'roll', 'agent:2')
    await untilPasses(async () => {
      const now = await podsOf(server, 'default', 'app=roll')
      assert.equal(now.length, 3)
      for (const pod of now) {
        assert.ok(!before.has(pod.metadata.name), 'every pod replaced')
        assert.equal(specOf(pod)['containers'][0].image, 'agent:2')
        assert.equal(pod.metadata.labels!['pod-template-generation'], '2')
      }
      assert.deepEqual(pinnedNodes(now), ['r1', 'r2', 'r3'])
      const status = statusOf(await getDS(server, 'roll'))
      assert.equal(status['updatedNumberScheduled'], 3)
      assert.equal(status['numberAvailable'], 3)
      assert.equal(status['observedGeneration'], 2)
    })
    const revisions = (await server.client.list(controllerRevisions, 'default', { labelSelector: 'app=roll' })).items
    assert.deepEqual(revisions.map((r) => r['revision']).sort(), [1, 2])
    const current = revisions.find((r) => r['revision'] === 2)!
    for (const pod of await podsOf(server, 'default', 'app=roll')) assert.equal(pod.metadata.labels!['controller-revision-hash'], current.metadata.labels!['controller-revision-hash'])

    // Back to the first template: its revision becomes the newest again, no third one is made.
    await updateTemplate(server, 'roll', 'agent:1')
    await untilPasses(async () => {
      const again = (await server.client.list(controllerRevisions, 'default', { labelSelector: 'app=roll' })).items
      assert.equal(again.length, 2)
      const newest = again.find((r) => r['revision'] === 3)
      assert.ok(newest, 'the old revision renumbered')
      const now = await podsOf(server, 'default', 'app=roll')
      assert.equal(now.length, 3)
      for (const pod of now) assert.equal(pod.metadata.labels!['controller-revision-hash'], newest!.metadata.labels!['controller-revision-hash'])
    })
  })

  it("serves each revision's data as the bytes upstream's Match computes from the DaemonSet a client reads", async () => {
    const server = await threeNodes()
    await server.client.create(daemonSets, 'default', daemonSet('bytes', {}, { template: { metadata: { labels: { app: 'bytes' }, annotations: { note: 'a<b & c>' } }, spec: { containers: [{ name: 'agent', image: 'agent:1' }] } } }))
    // A client's patch: the DaemonSet as served, its template's metadata with the zero creationTimestamp its
    // typed decoding adds, re-marshaled as a map (every key sorted, <, > and & escaped as Go escapes them).
    const served = JSON.parse(await (await server.fetch(new Request('http://api/apis/apps/v1/namespaces/default/daemonsets/bytes'))).text())
    const template = served.spec.template
    template.metadata = { creationTimestamp: null, ...template.metadata }
    const expected = goJson({ spec: { template: { ...template, $patch: 'replace' } } })
    await untilPasses(async () => {
      const text = await (await server.fetch(new Request('http://api/apis/apps/v1/namespaces/default/controllerrevisions?labelSelector=app%3Dbytes'))).text()
      const at = text.indexOf('"data":')
      assert.ok(at > 0, 'a revision is made')
      assert.equal(text.slice(at + '"data":'.length, at + '"data":'.length + expected.length), expected)
    })
  })

  it('with maxSurge, starts each new pod beside the old one before the old one goes', async () => {
    const server = await threeReadyNodes()
    await server.client.create(daemonSets, 'default', daemonSet('surge', {}, { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } } }))
    await untilPasses(async () => assert.equal(statusOf(await getDS(server, 'surge'))['numberAvailable'], 3))
    await updateTemplate(server, 'surge', 'agent:2')
    await untilPasses(async () => {
      const now = await podsOf(server, 'default', 'app=surge')
      assert.deepEqual(now.map((p) => specOf(p)['containers'][0].image), ['agent:2', 'agent:2', 'agent:2'])
      assert.deepEqual(pinnedNodes(now), ['r1', 'r2', 'r3'])
      const status = statusOf(await getDS(server, 'surge'))
      assert.equal(status['updatedNumberScheduled'], 3)
      assert.equal(status['numberAvailable'], 3)
    })
  })

  it('leaves pods of an old template alone under OnDelete until they are deleted', async () => {
    const server = await threeReadyNodes()
    await server.client.create(daemonSets, 'default', daemonSet('manual', {}, { updateStrategy: { type: 'OnDelete' } }))
    await untilPasses(async () => assert.equal((await podsOf(server, 'default', 'app=manual')).length, 3))
    const before = await podsOf(server, 'default', 'app=manual')
    await updateTemplate(server, 'manual', 'agent:2')
    await untilPasses(async () => {
      const status = statusOf(await getDS(server, 'manual'))
      assert.equal(status['observedGeneration'], 2)
      assert.equal(status['updatedNumberScheduled'], undefined)
    })
    assert.deepEqual((await podsOf(server, 'default', 'app=manual')).map((p) => p.metadata.name).sort(), before.map((p) => p.metadata.name).sort())

    await server.client.delete(pods, 'default', before[0]!.metadata.name!)
    await untilPasses(async () => {
      const now = await podsOf(server, 'default', 'app=manual')
      assert.equal(now.length, 3)
      assert.deepEqual(now.map((p) => specOf(p)['containers'][0].image).sort(), ['agent:1', 'agent:1', 'agent:2'])
      assert.equal(statusOf(await getDS(server, 'manual'))['updatedNumberScheduled'], 1)
    })
  })

  it('works under RBAC as daemon-set-controller, adopting a matching orphan', async () => {
    const server = await serverWith({ authorizationModes: ['RBAC'] })
    await addNode(server, 'x')
    const orphan = daemonSet('adopt')
    const template = (orphan['spec'] as any).template
    await server.client.create(pods, 'default', {
      apiVersion: 'v1',
      kind: 'Pod',
      // Of the first template generation: adopted as up to date, not replaced.
      metadata: { name: 'stray', labels: { ...template.metadata.labels, 'pod-template-generation': '1' } },
      spec: { ...template.spec, affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['x'] }] }] } } } },
    })
    const ds = await server.client.create(daemonSets, 'default', orphan)
    await untilPasses(async () => {
      const stray = await server.client.get(pods, 'default', 'stray')
      assert.equal(stray.metadata.ownerReferences?.[0]?.uid, ds.metadata.uid, 'adopted')
      assert.deepEqual((await podsOf(server, 'default', 'app=adopt')).map((p) => p.metadata.name), ['stray'], 'the node has its pod already')
      assert.equal(statusOf(await getDS(server, 'adopt'))['currentNumberScheduled'], 1)
    })
  })

  it('on simulated nodes, the scheduler binds each pod to its node, a cordoned one too, and all become ready', async () => {
    const server = await serverWith({ nodes: 3 })
    // Cordoned: daemon pods tolerate node.kubernetes.io/unschedulable, so the scheduler still places them there.
    const cordoned = await server.client.get(nodes, '', 'node-0')
    await server.client.update(nodes, '', { ...cordoned, spec: { ...(cordoned['spec'] as object), unschedulable: true } })
    await server.client.create(daemonSets, 'default', daemonSet('sim'))
    await untilPasses(async () => {
      const status = statusOf(await getDS(server, 'sim'))
      assert.equal(status['desiredNumberScheduled'], 3)
      assert.equal(status['numberReady'], 3)
      assert.equal(status['numberAvailable'], 3)
    })
    const bound = (await podsOf(server, 'default', 'app=sim')).map((p) => specOf(p)['nodeName'] as string).sort()
    assert.deepEqual(bound, ['node-0', 'node-1', 'node-2'])
  })
})
