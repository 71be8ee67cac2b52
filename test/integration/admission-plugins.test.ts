/**
 * The built-in admission plugins through createApiServer: what the default
 * set does to a pod, each refusal's status code and message with nothing
 * stored, plugins enabled by name with their configuration, and the two
 * phases (a validating plugin sees what the mutating ones made).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { admissionChain } from '../../core/admission/chain.js'
import { defaultAdmissionPlugins } from '../../core/admission/plugins.js'
import type { AdmissionPluginName } from '../../core/config/admission-plugins.js'
import { ConfigFileError } from '../../core/config/decode.js'
import { forbidden } from '../../core/machinery/status-error.js'
import { type ApiServerOptions, createApiServer } from '../../core/index.js'
import { ADMIN_IDENTITY } from '../../core/machinery/identities.js'
import { isPlainObject } from '../../core/machinery/object.js'
import { eventually, type Reply, startServer, TestClient } from './harness.js'

const PODS = '/api/v1/namespaces/default/pods'
const pod = (name: string, spec: Record<string, unknown> = {}) => ({ metadata: { name }, spec: { containers: [{ name: 'c', image: 'nginx' }], ...spec } })

const withPlugins = (plugins: AdmissionPluginName[], more: NonNullable<ApiServerOptions['admission']> = {}) =>
  startServer({ admission: { plugins: [...defaultAdmissionPlugins(), ...plugins], ...more } })

/** The refusal's code and message, and that the object is not there afterwards. */
async function refusedAndAbsent(api: TestClient, res: Reply, code: number, message: string, path: string): Promise<void> {
  assert.equal(res.status, code, res.text)
  assert.equal(res.body.message, message)
  assert.equal((await api.get(path)).status, 404, `${path} was not stored`)
}

describe('the default admission plugins on a pod', () => {
  it('run it as the default account with the token volume, 300s tolerations and priority 0', async () => {
    const api = await startServer()
    const res = await api.post(PODS, pod('web'))
    assert.equal(res.status, 201, res.text)
    const spec = res.body.spec
    assert.equal(spec.serviceAccountName, 'default')
    assert.match(spec.volumes[0].name, /^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/)
    assert.deepEqual(spec.volumes[0].projected.sources[0], { serviceAccountToken: { path: 'token', expirationSeconds: 3607 } })
    assert.deepEqual(spec.containers[0].volumeMounts, [{ name: spec.volumes[0].name, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }])
    assert.deepEqual(
      spec.tolerations.map((t: Record<string, unknown>) => [t['key'], t['tolerationSeconds']]),
      [
        ['node.kubernetes.io/not-ready', 300],
        ['node.kubernetes.io/unreachable', 300],
      ],
    )
    assert.deepEqual([spec.priority, spec.preemptionPolicy], [0, 'PreemptLowerPriority'])
  })

  it('refuse a pod of an account that does not exist, and one of an unknown priority class, with 403', async () => {
    const api = await startServer()
    await refusedAndAbsent(
      api,
      await api.post(PODS, pod('ghost', { serviceAccountName: 'ghost' })),
      403,
      'pods "ghost" is forbidden: error looking up service account default/ghost: serviceaccount "ghost" not found',
      `${PODS}/ghost`,
    )
    await refusedAndAbsent(
      api,
      await api.post(PODS, pod('vip', { priorityClassName: 'gold' })),
      403,
      'pods "vip" is forbidden: no PriorityClass with name gold was found',
      `${PODS}/vip`,
    )
  })

  it('take the priority of a class created just before, and refuse a second global default class', async () => {
    const api = await startServer()
    const PCS = '/apis/scheduling.k8s.io/v1/priorityclasses'
    assert.equal((await api.post(PCS, { metadata: { name: 'gold' }, value: 1000, globalDefault: true })).status, 201)
    const res = await api.post(PODS, pod('vip', { priorityClassName: 'gold' }))
    assert.equal(res.body.spec.priority, 1000, res.text)
    await eventually('the default class in the index', async () => (await api.post(`${PODS}?dryRun=All`, pod('plain'))).body.spec?.priorityClassName === 'gold')
    await refusedAndAbsent(
      api,
      await api.post(PCS, { metadata: { name: 'silver' }, value: 10, globalDefault: true }),
      403,
      'priorityclasses.scheduling.k8s.io "silver" is forbidden: PriorityClass gold is already marked as default. Only one default can exist',
      `${PCS}/silver`,
    )
  })

  it('wait for the default account of a namespace just created', async () => {
    const api = await startServer()
    assert.equal((await api.post('/api/v1/namespaces', { metadata: { name: 'fresh' } })).status, 201)
    const res = await api.post('/api/v1/namespaces/fresh/pods', pod('first'))
    assert.equal(res.status, 201, res.text)
  })
})

describe('admission plugins enabled by name', () => {
  it('AlwaysDeny refuses every write with 403 and stores nothing', async () => {
    // The server's own start-up writes would be refused too, as upstream's are.
    const api = await startServer({ admission: { plugins: ['AlwaysDeny'] }, bootstrapNamespaces: false, bootstrapPriorityClasses: false, bootstrapFlowControl: false })
    await refusedAndAbsent(
      api,
      await api.post('/api/v1/namespaces/default/configmaps', { metadata: { name: 'cm' } }),
      403,
      'configmaps "cm" is forbidden: admission control is denying all modifications',
      '/api/v1/namespaces/default/configmaps/cm',
    )
  })

  it('NamespaceAutoProvision creates the namespace of a create, but not for a dry run', async () => {
    const api = await withPlugins(['NamespaceAutoProvision'])
    const dry = await api.post('/api/v1/namespaces/dry/configmaps?dryRun=All', { metadata: { name: 'cm' } })
    assert.equal(dry.status, 404, dry.text)
    assert.equal((await api.get('/api/v1/namespaces/dry')).status, 404)
    const res = await api.post('/api/v1/namespaces/auto/configmaps', { metadata: { name: 'cm' } })
    assert.equal(res.status, 201, res.text)
    assert.equal((await api.get('/api/v1/namespaces/auto')).status, 200)
  })

  it('NamespaceExists refuses a write in a namespace that is not there with 404', async () => {
    const api = await startServer({ admission: { plugins: ['NamespaceExists'] } })
    await refusedAndAbsent(
      api,
      await api.post('/api/v1/namespaces/nowhere/configmaps', { metadata: { name: 'cm' } }),
      404,
      'namespaces "nowhere" not found',
      '/api/v1/namespaces/nowhere/configmaps/cm',
    )
  })

  it('DenyServiceExternalIPs refuses a Service with external IPs with 403', async () => {
    const api = await withPlugins(['DenyServiceExternalIPs'])
    const svc = { metadata: { name: 'web' }, spec: { ports: [{ port: 80 }], externalIPs: ['192.0.2.10'] } }
    await refusedAndAbsent(
      api,
      await api.post('/api/v1/namespaces/default/services', svc),
      403,
      'services "web" is forbidden: use of external IPs is denied by admission control',
      '/api/v1/namespaces/default/services/web',
    )
  })

  it('EventRateLimit answers 429 past the burst of its configuration', async () => {
    const configuration = { apiVersion: 'eventratelimit.admission.k8s.io/v1alpha1', kind: 'Configuration', limits: [{ type: 'Namespace', qps: 0.001, burst: 1 }] }
    const api = await withPlugins(['EventRateLimit'], { configurations: { EventRateLimit: configuration } })
    const event = (name: string) => ({ metadata: { name }, involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' }, reason: 'Test', message: 'm' })
    assert.equal((await api.post('/api/v1/namespaces/default/events', event('one'))).status, 201)
    await refusedAndAbsent(
      api,
      await api.post('/api/v1/namespaces/default/events', event('two')),
      429,
      'Too many requests: limit reached on type Namespace for key default',
      '/api/v1/namespaces/default/events/two',
    )
  })

  it('PodNodeSelector merges the namespace selector and refuses a conflicting pod with 403', async () => {
    const configurations = { PodNodeSelector: { podNodeSelectorPluginConfig: { clusterDefaultNodeSelector: 'zone=a' } } }
    const api = await withPlugins(['PodNodeSelector'], { configurations })
    const ns = { metadata: { name: 'gpu', annotations: { 'scheduler.alpha.kubernetes.io/node-selector': 'accel=gpu' } } }
    assert.equal((await api.post('/api/v1/namespaces', ns)).status, 201)
    assert.deepEqual((await api.post(PODS, pod('a'))).body.spec.nodeSelector, { zone: 'a' })
    assert.deepEqual((await api.post('/api/v1/namespaces/gpu/pods', pod('b'))).body.spec?.nodeSelector, { accel: 'gpu' })
    await refusedAndAbsent(
      api,
      await api.post('/api/v1/namespaces/gpu/pods', pod('c', { nodeSelector: { accel: 'tpu' } })),
      403,
      'pods "c" is forbidden: pod node label selector conflicts with its namespace node label selector',
      '/api/v1/namespaces/gpu/pods/c',
    )
  })

  it('refuses to build a plugin whose configuration it refuses', () => {
    const opts = (admission: ApiServerOptions['admission']) => ({ embeddedIdentity: ADMIN_IDENTITY, admission })
    assert.throws(() => createApiServer(opts({ plugins: ['EventRateLimit'] })), ConfigFileError)
  })
})

describe('the two phases', () => {
  it("a validating plugin sees the mutating plugins' work, and its refusal stores nothing", async () => {
    const seen: unknown[] = []
    const recorder = admissionChain([
      {
        name: 'SeesVolumes',
        handles: (op) => op === 'CREATE',
        validate(a) {
          if (a.entry.resource !== 'pods') return
          const spec = isPlainObject(a.object?.['spec']) ? a.object['spec'] : {}
          seen.push(spec['volumes'])
          if (a.name === 'refused') throw forbidden({ group: '', resource: 'pods' }, a.name, 'refused after mutation')
        },
      },
    ])
    const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY, bookmarkIntervalMs: 50 }, { admission: recorder })
    await server.ready
    const api = new TestClient(server)
    assert.equal((await api.post(PODS, pod('ok'))).status, 201)
    await refusedAndAbsent(api, await api.post(PODS, pod('refused')), 403, 'pods "refused" is forbidden: refused after mutation', `${PODS}/refused`)
    assert.equal(seen.length, 2)
    for (const volumes of seen) assert.match((volumes as { name: string }[])[0]?.name ?? '', /^kube-api-access-/)
  })
})
