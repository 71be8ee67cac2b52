/**
 * `pods/<name>/resize`, what in-place vertical scaling writes (`kubectl
 * patch pod NAME --subresource=resize`): a write changes the containers'
 * cpu and memory and nothing else of the pod; upstream's refusals (another
 * QoS class, other resources, a request or limit removed, containers
 * renamed, reordered or added, static and Windows pods) are 422 with
 * upstream's words, and nothing is stored. A server-side apply owns the
 * resources alone. ResourceQuota charges what a resize adds, LimitRanger
 * checks it.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { eventually, startServer, type TestClient } from './harness.js'

const PODS = '/api/v1/namespaces/default/pods'
const MERGE = 'application/merge-patch+json'
const STRATEGIC = 'application/strategic-merge-patch+json'

type Resources = { requests?: Record<string, string>; limits?: Record<string, string> }
const container = (name: string, resources: Resources, extra: Record<string, unknown> = {}) => ({ name, image: 'nginx', resources, ...extra })
const burstable: Resources = { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '500m', memory: '256Mi' } }
const guaranteed: Resources = { requests: { cpu: '500m', memory: '128Mi' }, limits: { cpu: '500m', memory: '128Mi' } }

async function createPod(client: TestClient, name: string, containers: unknown[], extra: { spec?: Record<string, unknown>; metadata?: Record<string, unknown> } = {}) {
  const reply = await client.post(PODS, { metadata: { name, ...extra.metadata }, spec: { containers, ...extra.spec } })
  assert.equal(reply.status, 201, reply.text)
  return reply.body
}

/** Sends a resize and checks the 422 names `message` and that the pod is stored as before. */
async function assertRefused(client: TestClient, name: string, send: () => Promise<{ status: number; text: string; body: any }>, message: RegExp) {
  const before = (await client.get(`${PODS}/${name}`)).body
  const reply = await send()
  assert.equal(reply.status, 422, reply.text)
  assert.equal(reply.body.reason, 'Invalid')
  assert.match(reply.body.message, message)
  const after = (await client.get(`${PODS}/${name}`)).body
  assert.equal(after.metadata.resourceVersion, before.metadata.resourceVersion, 'nothing stored')
  assert.deepEqual(after.spec, before.spec)
}

describe('pods/NAME/resize', () => {
  let client: TestClient

  before(async () => {
    client = await startServer()
  })

  it('answers a GET with the pod, as pods/status does', async () => {
    await createPod(client, 'read', [container('app', burstable)])
    const reply = await client.get(`${PODS}/read/resize`)
    assert.equal(reply.status, 200, reply.text)
    assert.equal(reply.body.kind, 'Pod')
    assert.equal(reply.body.metadata.name, 'read')
    assert.equal(reply.body.spec.containers[0].resources.limits.cpu, '500m')
  })

  it('changes cpu and memory with a merge patch, as kubectl patch --subresource=resize --type=merge sends it', async () => {
    await createPod(client, 'grow', [container('app', burstable)])
    const res = await client.server.fetch(
      new Request(`http://in-process${PODS}/grow/resize?fieldManager=kubectl-patch`, {
        method: 'PATCH',
        headers: { 'content-type': MERGE, accept: 'application/json' },
        body: JSON.stringify({ spec: { containers: [{ name: 'app', resources: { requests: { cpu: '200m', memory: '128Mi' }, limits: { cpu: '1', memory: '512Mi' } } }] } }),
      }),
    )
    const text = await res.text()
    assert.equal(res.status, 200, text)
    const answered = JSON.parse(text)
    assert.equal(answered.kind, 'Pod')
    assert.deepEqual(answered.spec.containers[0].resources, { requests: { cpu: '200m', memory: '128Mi' }, limits: { cpu: '1', memory: '512Mi' } })
    const stored = (await client.get(`${PODS}/grow`)).body
    assert.deepEqual(stored.spec.containers[0].resources, answered.spec.containers[0].resources)
    assert.equal(stored.status.qosClass, 'Burstable')
  })

  it('takes a strategic merge patch and a JSON patch too', async () => {
    await createPod(client, 'shapes', [container('app', burstable)])
    const strategic = await client.patch(`${PODS}/shapes/resize`, { spec: { containers: [{ name: 'app', resources: { requests: { cpu: '300m' } } }] } }, STRATEGIC)
    assert.equal(strategic.status, 200, strategic.text)
    assert.equal(strategic.body.spec.containers[0].resources.requests.cpu, '300m')
    assert.equal(strategic.body.spec.containers[0].resources.requests.memory, '64Mi', 'the rest of the requests merged in')
    const json = await client.patch(`${PODS}/shapes/resize`, [{ op: 'replace', path: '/spec/containers/0/resources/limits/memory', value: '300Mi' }], 'application/json-patch+json')
    assert.equal(json.status, 200, json.text)
    assert.equal((await client.get(`${PODS}/shapes`)).body.spec.containers[0].resources.limits.memory, '300Mi')
  })

  it('keeps everything but the resources as stored: an image, a label or the status in the write change nothing', async () => {
    await createPod(client, 'narrow', [container('app', burstable)], { metadata: { labels: { tier: 'web' } } })
    const pod = (await client.get(`${PODS}/narrow/resize`)).body
    pod.spec.containers[0].image = 'evil'
    pod.spec.containers[0].resources.requests.cpu = '250m'
    pod.spec.activeDeadlineSeconds = 5
    pod.metadata.labels = { tier: 'changed' }
    pod.status.phase = 'Failed'
    const reply = await client.put(`${PODS}/narrow/resize`, pod)
    assert.equal(reply.status, 200, reply.text)
    const stored = (await client.get(`${PODS}/narrow`)).body
    assert.equal(stored.spec.containers[0].resources.requests.cpu, '250m')
    assert.equal(stored.spec.containers[0].image, 'nginx')
    assert.equal(stored.spec.activeDeadlineSeconds, undefined)
    assert.deepEqual(stored.metadata.labels, { tier: 'web' })
    assert.equal(stored.status.phase, 'Pending')
  })

  it('refuses a change of a container resize policy with 422: only the resources are mutable', async () => {
    await createPod(client, 'policy', [container('app', burstable)])
    const policy = [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }]
    await assertRefused(
      client,
      'policy',
      () => client.patch(`${PODS}/policy/resize`, { spec: { containers: [{ name: 'app', resizePolicy: policy }] } }, STRATEGIC),
      /^Pod "policy" is invalid: spec: Forbidden: only cpu and memory resources are mutable$/,
    )
  })

  it('refuses a change of QoS class with 422, naming the class the pod has', async () => {
    await createPod(client, 'qos', [container('app', guaranteed)])
    await assertRefused(
      client,
      'qos',
      () => client.patch(`${PODS}/qos/resize`, { spec: { containers: [{ name: 'app', resources: { requests: { cpu: '200m' } } }] } }, STRATEGIC),
      /^Pod "qos" is invalid: spec: Invalid value: "Guaranteed": Pod QOS Class may not change as a result of resizing$/,
    )
  })

  it('refuses a change of any resource but cpu and memory with 422', async () => {
    await createPod(client, 'storage', [container('app', { ...burstable, limits: { ...burstable.limits, 'ephemeral-storage': '1Gi' } })])
    await assertRefused(
      client,
      'storage',
      () => client.patch(`${PODS}/storage/resize`, { spec: { containers: [{ name: 'app', resources: { limits: { 'ephemeral-storage': '2Gi' } } }] } }, STRATEGIC),
      /spec: Forbidden: only cpu and memory resources are mutable$/,
    )
    await createPod(client, 'bare', [container('app', burstable)])
    await assertRefused(
      client,
      'bare',
      () => client.patch(`${PODS}/bare/resize`, { spec: { containers: [{ name: 'app', resources: { requests: { 'ephemeral-storage': '1Gi' } } }] } }, STRATEGIC),
      /spec: Forbidden: only cpu and memory resources are mutable$/,
    )
  })

  it('refuses to remove a request or a limit with 422', async () => {
    // No memory limit: a request left out would otherwise be defaulted to its limit, as upstream defaults it.
    await createPod(client, 'removal', [container('app', { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '500m' } })])
    // A strategic merge patch's null removes the one key (a merge patch would replace the whole containers list).
    const without = (resources: Resources) => () => client.patch(`${PODS}/removal/resize`, { spec: { containers: [{ name: 'app', resources }] } }, STRATEGIC)
    await assertRefused(
      client,
      'removal',
      without({ requests: { memory: null } as unknown as Record<string, string> }),
      /spec\.containers\[0\]\.resources\.requests: Forbidden: resource requests cannot be removed/,
    )
    await assertRefused(
      client,
      'removal',
      without({ limits: { cpu: null } as unknown as Record<string, string> }),
      /spec\.containers\[0\]\.resources\.limits: Forbidden: resource limits cannot be removed/,
    )
  })

  it('refuses requests above the limits with 422, as any pod', async () => {
    await createPod(client, 'above', [container('app', burstable)])
    await assertRefused(
      client,
      'above',
      () => client.patch(`${PODS}/above/resize`, { spec: { containers: [{ name: 'app', resources: { requests: { cpu: '2' } } }] } }, STRATEGIC),
      /spec\.containers\[0\]\.resources\.requests: Invalid value: "2": must be less than or equal to cpu limit of 500m/,
    )
  })

  it('refuses containers renamed, reordered or added with 422', async () => {
    await createPod(client, 'pair', [container('c1', burstable), container('c2', burstable)])
    const pod = (await client.get(`${PODS}/pair/resize`)).body
    const reordered = structuredClone(pod)
    reordered.spec.containers.reverse()
    await assertRefused(
      client,
      'pair',
      () => client.put(`${PODS}/pair/resize`, reordered),
      /spec\.containers\[0\]\.name: Forbidden: containers may not be renamed or reordered on resize, spec\.containers\[1\]\.name: Forbidden: containers may not be renamed or reordered on resize/,
    )
    const renamed = structuredClone(pod)
    renamed.spec.containers[1].name = 'c3'
    await assertRefused(client, 'pair', () => client.put(`${PODS}/pair/resize`, renamed), /spec\.containers\[1\]\.name: Forbidden: containers may not be renamed or reordered on resize/)
    const added = structuredClone(pod)
    added.spec.containers.push({ ...pod.spec.containers[0], name: 'c4' })
    await assertRefused(client, 'pair', () => client.put(`${PODS}/pair/resize`, added), /spec\.containers: Forbidden: containers may not be added or removed on resize/)
  })

  it('refuses to resize a static pod or a Windows pod with 422', async () => {
    await createPod(client, 'mirror', [container('app', burstable)], { metadata: { annotations: { 'kubernetes.io/config.mirror': 'abc' } }, spec: { nodeName: 'node-1' } })
    const grow = { spec: { containers: [{ name: 'app', resources: { requests: { cpu: '200m' } } }] } }
    await assertRefused(client, 'mirror', () => client.patch(`${PODS}/mirror/resize`, grow, STRATEGIC), /^Pod "mirror" is invalid: : Forbidden: static pods cannot be resized$/)
    await createPod(client, 'windows', [container('app', burstable)], { spec: { os: { name: 'windows' } } })
    await assertRefused(client, 'windows', () => client.patch(`${PODS}/windows/resize`, grow, STRATEGIC), /^Pod "windows" is invalid: : Forbidden: windows pods cannot be resized$/)
  })

  it('refuses a resize on a node that does not report its containers resources', async () => {
    await createPod(client, 'old-node', [container('app', burstable)], { spec: { nodeName: 'node-1' } })
    const running = (await client.get(`${PODS}/old-node/status`)).body
    running.status.phase = 'Running'
    running.status.containerStatuses = [{ name: 'app', image: 'nginx', imageID: '', ready: true, restartCount: 0, state: { running: { startedAt: '2026-01-01T00:00:00Z' } } }]
    const status = await client.put(`${PODS}/old-node/status`, running)
    assert.equal(status.status, 200, status.text)
    await assertRefused(
      client,
      'old-node',
      () => client.patch(`${PODS}/old-node/resize`, { spec: { containers: [{ name: 'app', resources: { requests: { cpu: '200m' } } }] } }, STRATEGIC),
      /spec: Forbidden: Pod running on node without support for resize/,
    )
  })

  it('answers 404 for a pod that is not there, on a write and on a read', async () => {
    const patch = await client.patch(`${PODS}/missing/resize`, { spec: {} }, MERGE)
    assert.equal(patch.status, 404, patch.text)
    assert.equal(patch.body.reason, 'NotFound')
    assert.equal(patch.body.message, 'pods "missing" not found')
    assert.equal((await client.get(`${PODS}/missing/resize`)).status, 404)
  })

  it('serves server-side apply, owning only the resources: a conflict with their creator is 409 until forced', async () => {
    const created = await client.post(`${PODS}?fieldManager=creator`, { metadata: { name: 'applied' }, spec: { containers: [container('app', burstable)] } })
    assert.equal(created.status, 201, created.text)
    const config = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'applied' }, spec: { containers: [{ name: 'app', image: 'evil', resources: { requests: { cpu: '200m' } } }] } }
    const conflict = await client.patch(`${PODS}/applied/resize?fieldManager=tool`, config, 'application/apply-patch+yaml')
    assert.equal(conflict.status, 409, conflict.text)
    assert.equal(conflict.body.message, 'Apply failed with 1 conflict: conflict with "creator" using v1: .spec.containers[name="app"].resources.requests.cpu')
    const forced = await client.patch(`${PODS}/applied/resize?fieldManager=tool&force=true`, config, 'application/apply-patch+yaml')
    assert.equal(forced.status, 200, forced.text)
    assert.equal(forced.body.spec.containers[0].resources.requests.cpu, '200m')
    assert.equal(forced.body.spec.containers[0].image, 'nginx', 'the image applied is not kept')
    const tool = (forced.body.metadata.managedFields as { manager: string; time: string }[]).find((m) => m.manager === 'tool')
    assert.deepEqual(tool, {
      manager: 'tool',
      operation: 'Apply',
      apiVersion: 'v1',
      time: tool?.time,
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:spec': { 'f:containers': { 'k:{"name":"app"}': { 'f:resources': { 'f:requests': { 'f:cpu': {} } } } } } },
      subresource: 'resize',
    })
  })
})

describe('pods/NAME/resize under a ResourceQuota', () => {
  const NS = '/api/v1/namespaces/team'

  it('charges what a resize adds and refuses one past the quota with 403, storing nothing', async () => {
    const api = await startServer({ garbageCollector: false, admission: { plugins: ['ResourceQuota'] } })
    assert.equal((await api.post('/api/v1/namespaces', { metadata: { name: 'team' } })).status, 201)
    assert.equal((await api.post(`${NS}/resourcequotas`, { metadata: { name: 'compute' }, spec: { hard: { 'requests.cpu': '1' } } })).status, 201)
    const used = async () => (await api.get(`${NS}/resourcequotas/compute`)).body.status?.used?.['requests.cpu']
    await eventually('the quota is counted', async () => (await used()) === '0')
    const pod = { metadata: { name: 'web' }, spec: { containers: [container('app', { requests: { cpu: '400m' } })] } }
    assert.equal((await api.post(`${NS}/pods`, pod)).status, 201)
    assert.equal(await used(), '400m')

    const grow = (cpu: string) => api.patch(`${NS}/pods/web/resize`, { spec: { containers: [{ name: 'app', resources: { requests: { cpu } } }] } }, STRATEGIC)
    const within = await grow('700m')
    assert.equal(within.status, 200, within.text)
    assert.equal(await used(), '700m')

    const past = await grow('1200m')
    assert.equal(past.status, 403, past.text)
    assert.equal(past.body.message, 'pods "web" is forbidden: exceeded quota: compute, requested: requests.cpu=500m, used: requests.cpu=700m, limited: requests.cpu=1')
    assert.equal((await api.get(`${NS}/pods/web`)).body.spec.containers[0].resources.requests.cpu, '700m')
    assert.equal(await used(), '700m')
  })
})

describe('pods/NAME/resize under a LimitRange', () => {
  const NS = '/api/v1/namespaces/team'

  it('refuses a resize past the range with 403 and upstream’s message, storing nothing', async () => {
    const api = await startServer({ garbageCollector: false, admission: { plugins: ['LimitRanger'] } })
    assert.equal((await api.post('/api/v1/namespaces', { metadata: { name: 'team' } })).status, 201)
    const range = await api.post(`${NS}/limitranges`, { metadata: { name: 'limits' }, spec: { limits: [{ type: 'Container', max: { cpu: '1' } }] } })
    assert.equal(range.status, 201, range.text)
    const pod = { metadata: { name: 'web' }, spec: { containers: [container('app', { requests: { cpu: '200m' }, limits: { cpu: '500m' } })] } }
    assert.equal((await api.post(`${NS}/pods`, pod)).status, 201)
    const grow = (cpu: string) => api.patch(`${NS}/pods/web/resize`, { spec: { containers: [{ name: 'app', resources: { limits: { cpu } } }] } }, STRATEGIC)
    // Admission reads limit ranges from a watch: the resize that comes after it must meet it.
    let past = await grow('2')
    await eventually('the limit range is in effect', async () => {
      if (past.status === 200) assert.equal((await grow('500m')).status, 200)
      past = await grow('2')
      return past.status === 403
    })
    assert.equal(past.body.message, 'pods "web" is forbidden: maximum cpu usage per Container is 1, but limit is 2')
    assert.equal((await api.get(`${NS}/pods/web`)).body.spec.containers[0].resources.limits.cpu, '500m')
    const within = await grow('800m')
    assert.equal(within.status, 200, within.text)
  })
})
