/**
 * ResourceQuota on a server of its own: the in-process controller fills a
 * quota's status, creates are refused past `hard` with upstream's 403
 * messages and nothing stored, admitted ones show in `status.used` at once,
 * deletes give usage back, dry runs charge nothing, scopes pick their pods,
 * and the plugin's configuration limits resources by default.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { ApiServerOptions } from '../../core/index.js'
import { eventually, startServer, type TestClient } from './harness.js'

const NS = '/api/v1/namespaces/team'

async function serverWithQuota(options: ApiServerOptions = {}): Promise<TestClient> {
  const api = await startServer({ garbageCollector: false, admission: { plugins: ['ResourceQuota'] }, ...options })
  assert.equal((await api.post('/api/v1/namespaces', { metadata: { name: 'team' } })).status, 201)
  return api
}

async function createQuota(api: TestClient, name: string, spec: Record<string, unknown>): Promise<void> {
  assert.equal((await api.post(`${NS}/resourcequotas`, { metadata: { name }, spec })).status, 201)
  await eventually(`quota ${name} is counted`, async () => {
    const q = (await api.get(`${NS}/resourcequotas/${name}`)).body
    return q.status?.used !== undefined && Object.keys(q.status.used).length === Object.keys(spec['hard'] as object).length
  })
}

const used = async (api: TestClient, name: string): Promise<Record<string, string>> => (await api.get(`${NS}/resourcequotas/${name}`)).body.status.used

function pod(name: string, resources?: Record<string, Record<string, string>>, spec: Record<string, unknown> = {}) {
  return { metadata: { name }, spec: { containers: [{ name: 'c', image: 'nginx', ...(resources ? { resources } : {}) }], ...spec } }
}

describe('ResourceQuota admission', () => {
  it('counts, charges, refuses past hard with nothing stored, and gives back on delete', async () => {
    const api = await serverWithQuota()
    await createQuota(api, 'compute', { hard: { pods: '2', 'requests.cpu': '1', 'limits.memory': '1Gi' } })
    assert.deepEqual(await used(api, 'compute'), { pods: '0', 'requests.cpu': '0', 'limits.memory': '0' })

    const bare = await api.post(`${NS}/pods`, pod('bare'))
    assert.equal(bare.status, 403)
    assert.equal(bare.body.reason, 'Forbidden')
    assert.equal(
      bare.body.message,
      'pods "bare" is forbidden: failed quota: compute: must specify limits.memory for: c; must specify requests.cpu for: c',
    )
    assert.equal((await api.get(`${NS}/pods/bare`)).status, 404)

    const first = await api.post(`${NS}/pods`, pod('first', { requests: { cpu: '600m' }, limits: { memory: '512Mi' } }))
    assert.equal(first.status, 201)
    assert.deepEqual(await used(api, 'compute'), { pods: '1', 'requests.cpu': '600m', 'limits.memory': '512Mi' })

    const second = await api.post(`${NS}/pods`, pod('second', { requests: { cpu: '600m' }, limits: { memory: '256Mi' } }))
    assert.equal(second.status, 403)
    assert.equal(
      second.body.message,
      'pods "second" is forbidden: exceeded quota: compute, requested: requests.cpu=600m, used: requests.cpu=600m, limited: requests.cpu=1',
    )
    assert.equal((await api.get(`${NS}/pods/second`)).status, 404)
    assert.deepEqual(await used(api, 'compute'), { pods: '1', 'requests.cpu': '600m', 'limits.memory': '512Mi' })

    // A dry run is checked and charges nothing.
    const dry = await api.post(`${NS}/pods?dryRun=All`, pod('dry', { requests: { cpu: '400m' }, limits: { memory: '256Mi' } }))
    assert.equal(dry.status, 201)
    assert.deepEqual(await used(api, 'compute'), { pods: '1', 'requests.cpu': '600m', 'limits.memory': '512Mi' })

    assert.equal((await api.delete(`${NS}/pods/first?gracePeriodSeconds=0`)).status, 200)
    await eventually('the deleted pod is given back', async () => (await used(api, 'compute'))['requests.cpu'] === '0')
    assert.deepEqual(await used(api, 'compute'), { pods: '0', 'requests.cpu': '0', 'limits.memory': '0' })
    assert.equal((await api.post(`${NS}/pods`, pod('second', { requests: { cpu: '600m' }, limits: { memory: '256Mi' } }))).status, 201)
  })

  it('gives back a delete to each of many quotas over the same objects, each counted with its own scope', async () => {
    const api = await serverWithQuota()
    for (let i = 0; i < 300; i++) assert.equal((await api.post(`${NS}/configmaps`, { metadata: { name: `cm-${i}` } })).status, 201)
    await createQuota(api, 'best-effort', { hard: { pods: '10' }, scopes: ['BestEffort'] })
    for (let i = 0; i < 40; i++) await createQuota(api, `q-${i}`, { hard: { 'count/configmaps': '1000', pods: '10' } })
    assert.equal((await api.post(`${NS}/pods`, pod('sized', { requests: { cpu: '100m' }, limits: { cpu: '100m' } }))).status, 201)
    assert.equal((await api.post(`${NS}/pods`, pod('bare'))).status, 201)
    for (let i = 0; i < 10; i++) assert.equal((await api.delete(`${NS}/configmaps/cm-${i}`)).status, 200)
    assert.equal((await api.delete(`${NS}/pods/sized?gracePeriodSeconds=0`)).status, 200)
    await eventually('every quota gave the deletes back', async () => {
      const list = (await api.get(`${NS}/resourcequotas`)).body.items as { metadata: { name: string }; status: { used: Record<string, string> } }[]
      return list.every((q) => (q.metadata.name === 'best-effort' ? q.status.used['pods'] === '1' : q.status.used['count/configmaps'] === '290' && q.status.used['pods'] === '1'))
    }, 15_000)
  })

  it('counts objects of any resource by count/<resource>.<group>, and services by kind', async () => {
    const api = await serverWithQuota()
    await createQuota(api, 'objects', {
      hard: { 'count/configmaps': '1', 'count/deployments.apps': '0', services: '2', 'services.nodeports': '1', 'services.loadbalancers': '0' },
    })
    assert.equal((await api.post(`${NS}/configmaps`, { metadata: { name: 'a' } })).status, 201)
    const b = await api.post(`${NS}/configmaps`, { metadata: { name: 'b' } })
    assert.equal(b.status, 403)
    assert.equal(
      b.body.message,
      'configmaps "b" is forbidden: exceeded quota: objects, requested: count/configmaps=1, used: count/configmaps=1, limited: count/configmaps=1',
    )
    const deploy = {
      metadata: { name: 'd' },
      spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: pod('x').spec } },
    }
    const d = await api.post('/apis/apps/v1/namespaces/team/deployments', deploy)
    assert.equal(d.status, 403)
    assert.match(d.body.message, /^deployments.apps "d" is forbidden: exceeded quota: objects, requested: count\/deployments.apps=1, used: count\/deployments.apps=0, limited: count\/deployments.apps=0$/)
    assert.equal((await api.get('/apis/apps/v1/namespaces/team/deployments/d')).status, 404)

    const lb = await api.post(`${NS}/services`, { metadata: { name: 'lb' }, spec: { type: 'LoadBalancer', ports: [{ port: 80 }] } })
    assert.equal(lb.status, 403)
    assert.match(lb.body.message, /exceeded quota: objects, requested: services.loadbalancers=1, used: services.loadbalancers=0, limited: services.loadbalancers=0/)
    assert.equal((await api.post(`${NS}/services`, { metadata: { name: 'np' }, spec: { type: 'NodePort', ports: [{ port: 80 }] } })).status, 201)
    const np2 = await api.post(`${NS}/services`, { metadata: { name: 'np2' }, spec: { type: 'NodePort', ports: [{ port: 81 }] } })
    assert.equal(np2.status, 403)
    assert.match(np2.body.message, /requested: services.nodeports=1, used: services.nodeports=1, limited: services.nodeports=1/)
    const u = await used(api, 'objects')
    assert.equal(u['services'], '1')
    assert.equal(u['count/configmaps'], '1')

    await api.delete(`${NS}/configmaps/a`)
    await eventually('the configmap is given back', async () => (await used(api, 'objects'))['count/configmaps'] === '0')
  })

  it('applies scoped quotas only to the pods their scopes select', async () => {
    const api = await serverWithQuota()
    await createQuota(api, 'best-effort', { hard: { pods: '1' }, scopes: ['BestEffort'] })
    await createQuota(api, 'high', {
      hard: { pods: '0' },
      scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] },
    })
    assert.equal((await api.post(`${NS}/pods`, pod('be1'))).status, 201)
    const be2 = await api.post(`${NS}/pods`, pod('be2'))
    assert.equal(be2.status, 403)
    assert.match(be2.body.message, /exceeded quota: best-effort, requested: pods=1, used: pods=1, limited: pods=1/)
    // Not best-effort: the scoped quota does not see it.
    assert.equal((await api.post(`${NS}/pods`, pod('burstable', { requests: { cpu: '100m' } }))).status, 201)
    const high = await api.post(`${NS}/pods`, pod('high', { requests: { cpu: '100m' } }, { priorityClassName: 'high' }))
    assert.equal(high.status, 403)
    assert.match(high.body.message, /exceeded quota: high, requested: pods=1, used: pods=0, limited: pods=0/)
    assert.deepEqual(await used(api, 'best-effort'), { pods: '1' })
  })

  it('refuses what its configuration limits by default where no quota covers it', async () => {
    const configuration = {
      apiVersion: 'apiserver.config.k8s.io/v1',
      kind: 'ResourceQuotaConfiguration',
      limitedResources: [{ resource: 'pods', matchContains: ['requests.cpu'] }],
    }
    const api = await serverWithQuota({ admission: { plugins: ['ResourceQuota'], configurations: { ResourceQuota: configuration } } })
    const res = await api.post(`${NS}/pods`, pod('p', { requests: { cpu: '100m' } }))
    assert.equal(res.status, 403)
    assert.equal(res.body.message, 'pods "p" is forbidden: insufficient quota to consume: requests.cpu')
    assert.equal((await api.get(`${NS}/pods/p`)).status, 404)
    assert.equal((await api.post(`${NS}/pods`, pod('no-cpu'))).status, 201)
    await createQuota(api, 'cpu', { hard: { 'requests.cpu': '1' } })
    assert.equal((await api.post(`${NS}/pods`, pod('p', { requests: { cpu: '100m' } }))).status, 201)
  })

  it('stops start-up on an invalid configuration, naming the field', async () => {
    const configuration = { apiVersion: 'apiserver.config.k8s.io/v1', kind: 'ResourceQuotaConfiguration', limitedResources: [{ matchContains: ['x'] }] }
    await assert.rejects(
      () => startServer({ admission: { plugins: ['ResourceQuota'], configurations: { ResourceQuota: configuration } } }),
      /limitedResources\[0\]\.resource: Required value/,
    )
  })
})
