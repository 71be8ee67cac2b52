/**
 * Simulated nodes: Ready nodes with leases, a scheduler that binds what fits
 * and leaves what does not Pending with upstream's condition, and a kubelet
 * that runs, finishes, fails and removes pods, each writing as its node.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { ObjectClient } from '../../core/client/object-client.js'
import type { KubeObject } from '../../core/machinery/object.js'
import { events } from '../../core/resources/core/events.js'
import { nodes } from '../../core/resources/core/nodes.js'
import { pods } from '../../core/resources/core/pods.js'
import { leases } from '../../core/resources/groups/coordination.js'
import { deployments } from '../../core/resources/groups/apps.js'
import { createApiServer } from '../../core/server.js'
import { ADMIN_IDENTITY } from '../../core/machinery/identities.js'
import { EXIT_CODE_ANNOTATION } from '../../core/simulation/index.js'

type Status = { phase?: string; podIP?: string; hostIP?: string; conditions?: { type: string; status: string; reason?: string; message?: string }[]; containerStatuses?: { ready: boolean; state: Record<string, { exitCode?: number }> }[] }
const statusOf = (o: KubeObject): Status => (o['status'] ?? {}) as Status

async function until<T>(what: string, read: () => Promise<T>, holds: (value: T) => boolean): Promise<T> {
  for (let i = 0; i < 1000; i++) {
    const value = await read()
    if (holds(value)) return value
    await new Promise((r) => setTimeout(r, 5))
  }
  assert.fail(`gave up waiting: ${what}`)
}

const pod = (name: string, spec: Record<string, unknown> = {}, annotations?: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, ...(annotations ? { annotations } : {}) },
  spec: { containers: [{ name: 'main', image: 'busybox' }], ...spec },
})

const phase = (client: ObjectClient, name: string, wanted: string) =>
  until(`${name} to be ${wanted}`, () => client.get(pods, 'default', name), (p) => statusOf(p).phase === wanted)

describe('simulated nodes', () => {
  it('registers Ready nodes that hold a lease each', async () => {
    const server = createApiServer({ nodes: { count: 3, capacity: { cpu: '4', memory: '8Gi', pods: '10' } } })
    await server.ready
    const listed = (await server.client.list(nodes)).items
    assert.deepEqual(listed.map((n) => n.metadata.name), ['node-0', 'node-1', 'node-2'])
    for (const node of listed) {
      const ready = ((node['status'] as Status).conditions ?? []).find((c) => c.type === 'Ready')
      assert.equal(ready?.status, 'True')
      assert.deepEqual((node['status'] as { allocatable: unknown }).allocatable, { cpu: '4', memory: '8Gi', pods: '10' })
      // A kubelet no newer than the server, as the version skew policy keeps a cluster's.
      assert.equal((node['status'] as { nodeInfo: { kubeletVersion: string } }).nodeInfo.kubeletVersion, 'v1.32.0')
      const lease = await server.client.get(leases, 'kube-node-lease', node.metadata.name!)
      assert.equal((lease['spec'] as { holderIdentity: string }).holderIdentity, node.metadata.name)
    }
    await server.shutdown()
  })

  it('reaches a simulated node agent through nodes/proxy without a CA: it answers in process, no address is dialled', async () => {
    const server = createApiServer({ nodes: 1, embeddedIdentity: ADMIN_IDENTITY })
    await server.ready
    const reply = await server.fetch(new Request('http://in-process/api/v1/nodes/node-0/proxy/healthz'))
    assert.equal(reply.status, 404)
    assert.equal(await reply.text(), 'the simulated node agent does not serve GET /healthz\n')
    await server.shutdown()
  })

  it('schedules a pod that fits and runs it; leaves one that fits nowhere Pending as Unschedulable', async () => {
    const server = createApiServer({ nodes: { count: 3, capacity: { cpu: '2', memory: '4Gi', pods: '110' } } })
    await server.ready
    const { client } = server
    await client.create(pods, 'default', pod('small', { containers: [{ name: 'main', image: 'nginx', resources: { requests: { cpu: '500m' } } }] }))
    const running = await phase(client, 'small', 'Running')
    const status = statusOf(running)
    assert.match(String((running['spec'] as { nodeName?: string }).nodeName), /^node-\d$/)
    assert.match(String(status.podIP), /^10\.244\.\d\.\d+$/)
    assert.match(String(status.hostIP), /^192\.0\.2\.\d$/)
    assert.equal(status.conditions?.find((c) => c.type === 'Ready')?.status, 'True')
    assert.equal(status.containerStatuses?.[0]?.ready, true)

    await client.create(pods, 'default', pod('huge', { containers: [{ name: 'main', image: 'nginx', resources: { requests: { cpu: '64' } } }] }))
    const pending = await until('huge to be marked unschedulable', () => client.get(pods, 'default', 'huge'), (p) =>
      Boolean(statusOf(p).conditions?.some((c) => c.type === 'PodScheduled' && c.status === 'False')),
    )
    const scheduled = statusOf(pending).conditions?.find((c) => c.type === 'PodScheduled')
    assert.equal(scheduled?.reason, 'Unschedulable')
    assert.equal(scheduled?.message, '0/3 nodes are available: 3 Insufficient cpu.')
    assert.equal((pending['spec'] as { nodeName?: string }).nodeName, undefined)
    const failed = await until('a FailedScheduling event', () => client.list(events, 'default'), (l) => l.items.some((e) => e['reason'] === 'FailedScheduling'))
    assert.ok(failed.items.length > 0, 'events were listed')

    await client.create(pods, 'default', pod('picky', { nodeSelector: { 'kubernetes.io/hostname': 'node-2' } }))
    assert.equal(((await phase(client, 'picky', 'Running'))['spec'] as { nodeName: string }).nodeName, 'node-2')
    await server.shutdown()
  })

  // Upstream's conformance spec "Events should be sent by kubelets and the scheduler" lists them by these fields.
  it('records the kubelet’s events as it starts and stops a pod’s containers, from the node', async () => {
    const server = createApiServer({ nodes: 1 })
    await server.ready
    const { client } = server
    await client.create(pods, 'default', pod('web', { containers: [{ name: 'main', image: 'nginx:1.27' }, { name: 'side', image: 'busybox:latest' }] }))
    const running = await phase(client, 'web', 'Running')
    const fromKubelet = async (): Promise<KubeObject[]> =>
      (await client.list(events, 'default', { fieldSelector: `involvedObject.kind=Pod,involvedObject.uid=${running.metadata.uid},source=kubelet` })).items
    const started = await until('the kubelet’s start events', fromKubelet, (items) => items.length === 7)
    const seen = (items: KubeObject[]) =>
      items.map((e) => [(e['involvedObject'] as { fieldPath?: string }).fieldPath, e['reason'], e['message']]).sort((a, b) => String(a).localeCompare(String(b)))
    assert.deepEqual(seen(started), [
      ['spec.containers{main}', 'Created', 'Container created'],
      ['spec.containers{main}', 'Pulled', 'Container image "nginx:1.27" already present on machine and can be accessed by the pod'],
      ['spec.containers{main}', 'Started', 'Container started'],
      ['spec.containers{side}', 'Created', 'Container created'],
      // :latest is pulled every time (imagePullPolicy defaults to Always).
      ['spec.containers{side}', 'Pulled', 'Successfully pulled image "busybox:latest" in 0s (0s including waiting). Image size: 0 bytes.'],
      ['spec.containers{side}', 'Pulling', 'Pulling image "busybox:latest"'],
      ['spec.containers{side}', 'Started', 'Container started'],
    ])
    for (const event of started) {
      assert.deepEqual(event['source'], { component: 'kubelet', host: 'node-0' })
      assert.equal(event['reportingInstance'], 'node-0')
    }
    await client.delete(pods, 'default', 'web')
    const stopped = await until('the kubelet’s Killing events', fromKubelet, (items) => items.filter((e) => e['reason'] === 'Killing').length === 2)
    assert.deepEqual(stopped.filter((e) => e['reason'] === 'Killing').map((e) => e['message']).sort(), ['Stopping container main', 'Stopping container side'])
    await server.shutdown()
  })

  // What upstream's InitContainer conformance specs look for.
  it('runs init containers first: a pod starts once they succeeded, fails with one under Never, and waits restarting it otherwise', async () => {
    const server = createApiServer({ nodes: 1 })
    await server.ready
    const { client } = server
    type InitStatus = { name: string; ready: boolean; restartCount: number; state: Record<string, { exitCode?: number; reason?: string }> }
    const initsOf = (p: KubeObject) => ((p['status'] as { initContainerStatuses?: InitStatus[] }).initContainerStatuses ?? [])
    const initialized = (p: KubeObject) => statusOf(p).conditions?.find((c) => c.type === 'Initialized')
    const inits = (...commands: string[][]) => commands.map((command, i) => ({ name: `init${i + 1}`, image: 'busybox', command }))

    await client.create(pods, 'default', pod('ok', { restartPolicy: 'Never', initContainers: inits(['/bin/true'], ['/bin/true']), containers: [{ name: 'run1', image: 'busybox', command: ['/bin/true'] }] }))
    const ok = await phase(client, 'ok', 'Succeeded')
    assert.equal(initialized(ok)?.status, 'True')
    assert.deepEqual(initsOf(ok).map((s) => [s.name, s.ready, s.state['terminated']?.exitCode]), [['init1', true, 0], ['init2', true, 0]])

    await client.create(pods, 'default', pod('fails', { restartPolicy: 'Never', initContainers: inits(['/bin/true'], ['/bin/false']) }))
    const failed = await phase(client, 'fails', 'Failed')
    const notInitialized = initialized(failed)
    assert.deepEqual([notInitialized?.status, notInitialized?.reason, notInitialized?.message], ['False', 'ContainersNotInitialized', 'containers with incomplete status: [init2]'])
    assert.deepEqual(statusOf(failed).containerStatuses?.[0]?.state, { waiting: { reason: 'PodInitializing' } })

    await client.create(pods, 'default', pod('loops', { initContainers: inits(['/bin/false'], ['/bin/true']) }))
    const looping = await until('init1 to back off', () => client.get(pods, 'default', 'loops'), (p) => initsOf(p)[0]?.state['waiting']?.reason === 'CrashLoopBackOff')
    assert.equal(statusOf(looping).phase, 'Pending')
    assert.equal(initsOf(looping)[0]?.restartCount, 1)
    // Its last exit is kept where clients read it (lastState), which the next restart starts from.
    assert.equal((initsOf(looping)[0] as unknown as { lastState?: { terminated?: { exitCode: number } } }).lastState?.terminated?.exitCode, 1)
    assert.equal(initialized(looping)?.message, 'containers with incomplete status: [init1 init2]')
    assert.equal(initsOf(looping)[1]?.state['waiting']?.reason, 'PodInitializing')
    await server.shutdown()
  })

  it('restarts a container that exits under restartPolicy Always, not ready while it backs off', async () => {
    const server = createApiServer({ nodes: 1 })
    await server.ready
    const { client } = server
    await client.create(pods, 'default', pod('crashes', { containers: [{ name: 'main', image: 'busybox', command: ['sh', '-c', 'exit 1'] }] }))
    type Restarting = { restartCount: number; state: { waiting?: { reason: string } }; lastState?: { terminated?: { exitCode: number } } }
    const first = (p: KubeObject) => ((p['status'] as { containerStatuses?: Restarting[] }).containerStatuses ?? [])[0]
    const looping = await until('main to back off', () => client.get(pods, 'default', 'crashes'), (p) => first(p)?.state.waiting?.reason === 'CrashLoopBackOff')
    assert.equal(statusOf(looping).phase, 'Running')
    assert.equal(first(looping)?.restartCount, 1)
    assert.equal(first(looping)?.lastState?.terminated?.exitCode, 1)
    const ready = statusOf(looping).conditions?.find((c) => c.type === 'Ready')
    assert.deepEqual([ready?.status, ready?.reason, ready?.message], ['False', 'ContainersNotReady', 'containers with unready status: [main]'])
    const warned = await until('the BackOff event', () => client.list(events, 'default'), (l) => l.items.some((e) => e['reason'] === 'BackOff'))
    assert.equal(warned.items.find((e) => e['reason'] === 'BackOff')?.['message'], `Back-off restarting failed container main in pod crashes_default(${looping.metadata.uid})`)
    await server.shutdown()
  })

  // Upstream's conformance spec "Pods should allow activeDeadlineSeconds to be updated" shortens it on a running pod.
  it('stops a pod at its activeDeadlineSeconds, counted from its start, also when changed while it runs', async () => {
    const server = createApiServer({ nodes: 1 })
    await server.ready
    const { client } = server
    await client.create(pods, 'default', pod('bounded', { activeDeadlineSeconds: 3600 }))
    const running = await phase(client, 'bounded', 'Running')
    await client.update(pods, 'default', { ...running, spec: { ...(running['spec'] as object), activeDeadlineSeconds: 1 } })
    const stopped = await phase(client, 'bounded', 'Failed')
    assert.deepEqual([statusOf(stopped).phase, (stopped['status'] as { reason?: string }).reason], ['Failed', 'DeadlineExceeded'])
    assert.equal((stopped['status'] as { message?: string }).message, 'Pod was active on the node longer than the specified deadline')
    assert.equal(statusOf(stopped).containerStatuses?.[0]?.state['terminated']?.exitCode, 137)
    await server.shutdown()
  })

  it('finishes pods whose containers exit, fails them by the exit-code annotation, and removes deleted pods', async () => {
    const server = createApiServer({ nodes: 2 })
    await server.ready
    const { client } = server
    await client.create(pods, 'default', pod('once', { restartPolicy: 'Never' }))
    const done = await phase(client, 'once', 'Succeeded')
    assert.equal(statusOf(done).containerStatuses?.[0]?.state['terminated']?.exitCode, 0)

    await client.create(pods, 'default', pod('crash', { restartPolicy: 'Never' }, { [EXIT_CODE_ANNOTATION]: '3' }))
    const crashed = await phase(client, 'crash', 'Failed')
    assert.equal(statusOf(crashed).containerStatuses?.[0]?.state['terminated']?.exitCode, 3)

    await client.create(pods, 'default', pod('server'))
    await phase(client, 'server', 'Running')
    await client.delete(pods, 'default', 'server')
    await until('the deleted pod to be gone', () => client.list(pods, 'default'), (l) => !l.items.some((p) => p.metadata.name === 'server'))
    await server.shutdown()
  })

  it('runs a container as its command says: sleep for that long, exit with that code', async () => {
    const server = createApiServer({ nodes: 1 })
    await server.ready
    const { client } = server
    const running = (command: string[]) => ({ restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox', command }] })
    await client.create(pods, 'default', pod('fails', running(['/bin/sh', '-c', 'exit 2'])))
    await client.create(pods, 'default', pod('naps', running(['sleep', '1.5'])))
    await client.create(pods, 'default', pod('forever', running(['sleep', '1000000'])))
    await client.create(pods, 'default', pod('two', { restartPolicy: 'Never', containers: [{ name: 'ok', image: 'busybox', command: ['true'] }, { name: 'bad', image: 'busybox', args: ['sh', '-c', 'exit 1;'] }] }))
    const failed = await phase(client, 'fails', 'Failed')
    assert.equal(statusOf(failed).containerStatuses?.[0]?.state['terminated']?.exitCode, 2)
    const two = await phase(client, 'two', 'Failed')
    assert.deepEqual(statusOf(two).containerStatuses?.map((c) => c.state['terminated']?.exitCode), [0, 1], 'each container its own code')
    // The nap is still on while the failures are done; then it ends, and the long sleep does not.
    assert.equal(statusOf(await client.get(pods, 'default', 'naps')).phase, 'Running')
    await phase(client, 'naps', 'Succeeded')
    assert.equal(statusOf(await client.get(pods, 'default', 'forever')).phase, 'Running')
    await server.shutdown()
  })

  it('keeps a host port to one pod a node: the scheduler looks elsewhere, the kubelet refuses a pod bound past it', async () => {
    const server = createApiServer({ nodes: 2 })
    await server.ready
    const { client } = server
    const withPort = (nodeName?: string) => ({ ...(nodeName ? { nodeName } : {}), containers: [{ name: 'web', image: 'nginx', ports: [{ containerPort: 80, hostPort: 8080 }] }] })
    for (const name of ['a', 'b', 'c']) await client.create(pods, 'default', pod(name, withPort()))
    await phase(client, 'a', 'Running')
    await phase(client, 'b', 'Running')
    const nodesOf = async () => (await Promise.all(['a', 'b'].map((n) => client.get(pods, 'default', n)))).map((p) => (p['spec'] as { nodeName: string }).nodeName)
    assert.deepEqual((await nodesOf()).sort(), ['node-0', 'node-1'], 'one per node')
    const unscheduled = await until('c to be found unschedulable', () => client.get(pods, 'default', 'c'), (p) => (statusOf(p).conditions ?? []).some((c) => c.reason === 'Unschedulable'))
    assert.equal(
      (statusOf(unscheduled).conditions ?? []).find((c) => c.type === 'PodScheduled')?.message,
      "0/2 nodes are available: 2 node(s) didn't have free ports for the requested pod ports.",
    )
    // Bound by hand past the scheduler, as a StatefulSet's pod pinned to a node: the kubelet's admission refuses it.
    await client.create(pods, 'default', pod('pinned', withPort('node-0')))
    const refused = await phase(client, 'pinned', 'Failed')
    assert.deepEqual([statusOf(refused) as Record<string, unknown>].map((s) => [s['reason'], s['message']]), [['NodePorts', 'Pod was rejected: Predicate NodePorts failed']])
    await client.delete(pods, 'default', 'a')
    await client.delete(pods, 'default', 'pinned')
    await phase(client, 'c', 'Running')
    await server.shutdown()
  })

  it('rolls out a Deployment with the controllers, under Node and RBAC authorization', async () => {
    const server = createApiServer({ nodes: 3, controllers: ['*'], authorizationModes: ['Node', 'RBAC'] })
    await server.ready
    const { client } = server
    await client.create(deployments, 'default', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'nginx', image: 'nginx' }] } } },
    })
    const web = await until('the Deployment to be available', () => client.get(deployments, 'default', 'web'), (d) => (d['status'] as { availableReplicas?: number } | undefined)?.availableReplicas === 3)
    assert.equal((web['status'] as { updatedReplicas: number }).updatedReplicas, 3)
    const running = (await client.list(pods, 'default')).items.filter((p) => statusOf(p).phase === 'Running')
    assert.equal(running.length, 3)
    await server.shutdown()
  })

  it('answers pods/log through the node-agent path: one line per container, with the agent’s query honoured', async () => {
    const server = createApiServer({ nodes: 1, embeddedIdentity: ADMIN_IDENTITY })
    await server.ready
    const { client } = server
    await client.create(pods, 'default', pod('logged', { containers: [{ name: 'main', image: 'busybox' }, { name: 'side', image: 'busybox' }] }))
    await phase(client, 'logged', 'Running')
    const log = (query: string) => server.fetch(new Request(`http://in-process/api/v1/namespaces/default/pods/logged/log?${query}`))
    const main = await log('container=main')
    assert.equal(main.status, 200)
    assert.equal(await main.text(), 'simulated container main of pod default/logged: no process runs here\n')
    assert.equal(await (await log('container=side&timestamps=true')).text().then((t) => t.replace(/^\S+ /, '')), 'simulated container side of pod default/logged: no process runs here\n')
    assert.match(await (await log('container=side&timestamps=true')).text(), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z simulated/)
    assert.equal(await (await log('container=main&tailLines=0')).text(), '')
    assert.equal(await (await log('container=main&limitBytes=9')).text(), 'simulated')
    // The server's own checks come first, as for a real agent: a container the pod lacks is refused before any call.
    const missing = await log('container=nope')
    assert.equal(missing.status, 400)
    assert.match(((await missing.json()) as { message: string }).message, /container nope is not valid for pod logged/)
    await server.shutdown()
  })

  it('refuses a count that is not a whole number', () => {
    assert.throws(() => createApiServer({ nodes: -1 }), /nodes: the count must be a whole number of at least 0, not -1/)
    assert.throws(() => createApiServer({ nodes: 1.5 }), /not 1\.5/)
  })
})
