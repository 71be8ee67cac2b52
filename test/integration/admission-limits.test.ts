/**
 * LimitRanger on a server of its own: a namespace's LimitRange defaults
 * containers' limits and requests (noted in the pod's annotation), and a
 * pod or claim outside its min, max or ratio is refused with upstream's 403
 * message and nothing stored; with ResourceQuota too, the defaults satisfy
 * a quota that demands stated requests.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { AdmissionPluginName } from '../../core/config/admission-plugins.js'
import { eventually, startServer, type TestClient } from './harness.js'

const NS = '/api/v1/namespaces/team'

async function serverWithLimits(plugins: AdmissionPluginName[] = ['LimitRanger']): Promise<TestClient> {
  const api = await startServer({ garbageCollector: false, admission: { plugins } })
  assert.equal((await api.post('/api/v1/namespaces', { metadata: { name: 'team' } })).status, 201)
  return api
}

async function createLimitRange(api: TestClient, limits: unknown[]): Promise<Record<string, any>> {
  const res = await api.post(`${NS}/limitranges`, { metadata: { name: 'limits' }, spec: { limits } })
  assert.equal(res.status, 201)
  // Admission reads limit ranges from a watch: the first pod after it must see it.
  await eventually('the limit range is in effect', async () => {
    const probe = await api.post(`${NS}/pods?dryRun=All`, pod('probe'))
    return probe.status !== 201 || probe.body.metadata.annotations?.['kubernetes.io/limit-ranger'] !== undefined
  })
  return res.body
}

function pod(name: string, resources?: Record<string, Record<string, string>>) {
  return { metadata: { name }, spec: { containers: [{ name: 'c', image: 'nginx', ...(resources ? { resources } : {}) }] } }
}

describe('LimitRanger admission', () => {
  it('defaults the limit range itself and gives containers its defaults, noted in an annotation', async () => {
    const api = await serverWithLimits()
    const range = await createLimitRange(api, [{ type: 'Container', max: { cpu: '2' }, default: { memory: '256Mi' }, min: { cpu: '50m' } }])
    assert.deepEqual(range.spec.limits[0].default, { memory: '256Mi', cpu: '2' })
    // The default request comes from the default before min, as upstream orders it.
    assert.deepEqual(range.spec.limits[0].defaultRequest, { memory: '256Mi', cpu: '2' })
    const res = await api.post(`${NS}/pods`, pod('p', { requests: { cpu: '100m' } }))
    assert.equal(res.status, 201)
    assert.deepEqual(res.body.spec.containers[0].resources, { limits: { memory: '256Mi', cpu: '2' }, requests: { cpu: '100m', memory: '256Mi' } })
    assert.equal(res.body.metadata.annotations['kubernetes.io/limit-ranger'], 'LimitRanger plugin set: memory request for container c; cpu, memory limit for container c')
  })

  it('refuses a container past max or under min, and a claim past max, with nothing stored', async () => {
    const api = await serverWithLimits()
    await createLimitRange(api, [
      { type: 'Container', max: { cpu: '1' }, min: { memory: '64Mi' }, maxLimitRequestRatio: { cpu: '2' } },
      { type: 'PersistentVolumeClaim', max: { storage: '2Gi' }, min: { storage: '1Gi' } },
    ])
    const big = await api.post(`${NS}/pods`, pod('big', { limits: { cpu: '2', memory: '128Mi' } }))
    assert.equal(big.status, 403)
    assert.equal(big.body.reason, 'Forbidden')
    assert.equal(big.body.message, 'pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2')
    assert.equal((await api.get(`${NS}/pods/big`)).status, 404)

    const ratio = await api.post(`${NS}/pods`, pod('ratio', { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '1', memory: '64Mi' } }))
    assert.equal(ratio.status, 403)
    assert.equal(ratio.body.message, 'pods "ratio" is forbidden: cpu max limit to request ratio per Container is 2, but provided ratio is 10.000000')

    const small = await api.post(`${NS}/pods`, pod('small', { requests: { cpu: '500m', memory: '32Mi' }, limits: { cpu: '500m', memory: '32Mi' } }))
    assert.equal(small.status, 403)
    assert.equal(small.body.message, 'pods "small" is forbidden: minimum memory usage per Container is 64Mi, but request is 32Mi')

    const claim = (name: string, storage: string) => ({
      metadata: { name },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } },
    })
    const huge = await api.post(`${NS}/persistentvolumeclaims`, claim('huge', '5Gi'))
    assert.equal(huge.status, 403)
    assert.equal(huge.body.message, 'persistentvolumeclaims "huge" is forbidden: maximum storage usage per PersistentVolumeClaim is 2Gi, but request is 5Gi')
    assert.equal((await api.get(`${NS}/persistentvolumeclaims/huge`)).status, 404)
    assert.equal((await api.post(`${NS}/persistentvolumeclaims`, claim('fits', '1Gi'))).status, 201)
  })

  it('checks a Pod item against the sum of the containers', async () => {
    const api = await serverWithLimits()
    await createLimitRange(api, [{ type: 'Pod', max: { memory: '1Gi' } }])
    const twice = {
      metadata: { name: 'two' },
      spec: {
        containers: ['a', 'b'].map((name) => ({ name, image: 'nginx', resources: { limits: { memory: '768Mi' } } })),
      },
    }
    const res = await api.post(`${NS}/pods`, twice)
    assert.equal(res.status, 403)
    assert.equal(res.body.message, 'pods "two" is forbidden: maximum memory usage per Pod is 1Gi, but limit is 1536Mi')
  })

  it('gives containers the requests a cpu quota demands before the quota checks them', async () => {
    const api = await serverWithLimits(['LimitRanger', 'ResourceQuota'])
    await createLimitRange(api, [{ type: 'Container', default: { cpu: '200m' } }])
    assert.equal((await api.post(`${NS}/resourcequotas`, { metadata: { name: 'q' }, spec: { hard: { 'requests.cpu': '1' } } })).status, 201)
    await eventually('the quota is counted', async () => (await api.get(`${NS}/resourcequotas/q`)).body.status?.used !== undefined)
    assert.equal((await api.post(`${NS}/pods`, pod('p'))).status, 201)
    assert.equal((await api.get(`${NS}/resourcequotas/q`)).body.status.used['requests.cpu'], '200m')
  })
})
