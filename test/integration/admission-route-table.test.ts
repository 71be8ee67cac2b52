/**
 * Every route passes authorization, and every write or CONNECT passes
 * admission before it has any effect. The walk takes the routes from
 * discovery (every resource of every served group version, every
 * subresource, every verb listed), sends each as a user whom an
 * authorization webhook allows everything and whom an admission plugin
 * refuses everything, and fails naming each route where:
 * - the authorization webhook was not asked with the request's attributes;
 * - a write or CONNECT succeeded (it went around admission);
 * - a write or CONNECT reached the node agent;
 * - admission refused it but saw other attributes than the request's;
 * - a write or CONNECT was answered before admission with anything but 404
 *   (a route or object that is not there).
 * The routes that write without the store (TokenRequest, eviction, the
 * CONNECT subresources) and the status, scale and approval writes must be
 * answered by that admission refusal: a new subresource cannot be added
 * open without this test naming it.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { AdmissionChain } from '../../core/admission/chain.js'
import type { AdmissionAttributes } from '../../core/admission/attributes.js'
import { forbidden } from '../../core/machinery/status-error.js'
import { createCertificateAuthority, issueClientCertificate } from '../../core/pki/certificates.js'
import { nodeProxyTransport, type NodeProxyTransport } from '../../runtimes/node/daemon/proxy-transport.js'
import { nodeWebhookClient, type NodeWebhookClient } from '../../runtimes/node/daemon/webhook-client.js'
import { collectionPath, SAMPLES } from './catalogue-samples.js'
import { createTestServer, TestClient } from './harness.js'
import { type NodeAgent, nodeAgentOptions, startNodeAgent } from './node-agent-server.js'
import { authorizedBy, type SarWebhook, startSarWebhook } from './sar-webhook.js'

const WALKER = 'route-walker'
const REFUSAL = 'the route walker may write nothing'
const NS = 'default'
const tokens = [{ token: 'walker-token', user: { username: WALKER, groups: ['walkers'] } }]
const walker = { connection: {}, headers: { authorization: 'Bearer walker-token' } }

/** What admission saw of one of the walker's requests. */
interface Admitted {
  phase: 'mutating' | 'validating'
  operation: string
  group: string
  resource: string
  subresource: string
  namespace: string
  name: string
  kind: string | undefined
}

/** The admission chain an embedder adds: it records the walker's requests and refuses every one of them. */
function refusingRecorder(seen: Admitted[]): AdmissionChain {
  const record = (phase: Admitted['phase']) => (a: AdmissionAttributes) => {
    if (a.user.username !== WALKER) return
    seen.push({
      phase,
      operation: a.operation,
      group: a.entry.group,
      resource: a.entry.resource,
      subresource: a.subresource ?? '',
      namespace: a.namespace,
      name: a.name,
      kind: a.object?.kind,
    })
    throw forbidden({ group: a.entry.group, resource: a.entry.resource }, a.name, REFUSAL)
  }
  return {
    mutating: { name: 'RouteWalker', handles: () => true, admit: record('mutating') },
    validating: { name: 'RouteWalker', handles: () => true, validate: record('validating') },
  }
}

interface Route {
  group: string
  version: string
  resource: string
  subresource: string
  namespaced: boolean
  kind: string
  verb: string
}

/**
 * The objects the walk names, so that a request to one of them would have
 * an effect if nothing stopped it: the catalogue's sample of each resource,
 * and for the node agent's subresources a pod, node and service it reaches.
 */
const NAMES: Record<string, string> = {
  ...Object.fromEntries(SAMPLES.map((s) => [s.gvr.split('/')[2] ?? '', (s.body['metadata'] as { name: string }).name])),
  pods: 'web',
  nodes: 'node-1',
  services: 'web',
  serviceaccounts: 'robot',
  deployments: 'app',
  // Not `default`, which NamespaceLifecycle keeps from deletion before the walk's plugin sees it.
  namespaces: 'walk',
}
const nameOf = (route: Route) => NAMES[route.resource] ?? 'probe'

/** The routes that must meet admission itself (they have no earlier refusal to hide behind). */
const MUST_REACH_ADMISSION = [
  'create /v1/serviceaccounts/token',
  'create /v1/pods/eviction',
  'create /v1/pods/exec',
  'get /v1/pods/exec',
  'create /v1/pods/attach',
  'create /v1/pods/portforward',
  'get /v1/pods/proxy',
  'create /v1/pods/proxy',
  'get /v1/nodes/proxy',
  'delete /v1/nodes/proxy',
  'get /v1/services/proxy',
  'patch /v1/pods/status',
  'update /v1/pods/status',
  'patch /v1/pods/resize',
  'update /v1/pods/resize',
  'patch /v1/pods/ephemeralcontainers',
  'patch apps/v1/deployments/scale',
  'update apps/v1/deployments/scale',
  'patch apps/v1/deployments/status',
  'update certificates.k8s.io/v1/certificatesigningrequests/approval',
  'create /v1/configmaps',
  'update /v1/configmaps',
  'patch /v1/configmaps',
  'delete /v1/configmaps',
  'deletecollection /v1/configmaps',
  'create authentication.k8s.io/v1/tokenreviews',
  'create authorization.k8s.io/v1/subjectaccessreviews',
]

const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection'])
const METHODS: Record<string, string> = { get: 'GET', list: 'GET', watch: 'GET', create: 'POST', update: 'PUT', patch: 'PATCH', delete: 'DELETE', deletecollection: 'DELETE' }
const CONNECT = new Set(['pods/exec', 'pods/attach', 'pods/portforward', 'pods/proxy', 'nodes/proxy', 'services/proxy'])

const label = (r: Route) => `${r.verb} ${r.group}/${r.version}/${r.resource}${r.subresource ? `/${r.subresource}` : ''}`

describe('every route passes authorization, and every write and CONNECT passes admission', () => {
  let agent: NodeAgent
  let sar: SarWebhook
  let webhookClient: NodeWebhookClient
  let transport: NodeProxyTransport
  let api: TestClient
  const admitted: Admitted[] = []

  before(async () => {
    sar = await startSarWebhook(() => ({ allowed: true }))
    webhookClient = nodeWebhookClient()
    transport = nodeProxyTransport()
    const clientCA = await createCertificateAuthority({ commonName: 'node-agent-client-ca' })
    const pair = await issueClientCertificate(clientCA, { commonName: 'apiserver-node-client', organizations: [] })
    agent = await startNodeAgent(clientCA.certificate)
    const server = createTestServer(
      {
        authentication: { tokens },
        ...authorizedBy(sar),
        nodeAgent: nodeAgentOptions(agent, pair),
      },
      { admission: refusingRecorder(admitted), webhookClient, proxyTransport: transport, checkProxyable: async () => {} },
    )
    await server.ready
    api = new TestClient(server)
    const container = [{ name: 'app', image: 'web', ports: [{ containerPort: 8080 }] }]
    const own = new Set(['/v1/pods', '/v1/nodes', '/v1/services', '/v1/serviceaccounts', 'apps/v1/deployments', '/v1/namespaces'])
    for (const sample of SAMPLES) {
      if (own.has(sample.gvr)) continue
      const [group = '', version = '', resource = ''] = sample.gvr.split('/')
      const entry = api.server.catalogue.lookup(group, version, resource)
      // A sample that needs what this server lacks stays out; its routes then answer 404, which writes nothing either.
      if (entry) await api.post(collectionPath(sample.gvr, entry.namespaced), { apiVersion: group ? `${group}/${version}` : version, kind: entry.kind, ...sample.body })
    }
    for (const [path, body] of [
      ['/api/v1/namespaces', { metadata: { name: 'walk' } }],
      [
        '/api/v1/nodes',
        {
          metadata: { name: 'node-1' },
          status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: agent.port } } },
        },
      ],
      [`/api/v1/namespaces/${NS}/serviceaccounts`, { metadata: { name: 'robot' } }],
      [`/api/v1/namespaces/${NS}/pods`, { metadata: { name: 'web', labels: { app: 'web' } }, spec: { nodeName: 'node-1', serviceAccountName: 'robot', containers: container } }],
      [`/api/v1/namespaces/${NS}/services`, { metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] } }],
      [
        `/apis/apps/v1/namespaces/${NS}/deployments`,
        { metadata: { name: 'app' }, spec: { selector: { matchLabels: { app: 'a' } }, template: { metadata: { labels: { app: 'a' } }, spec: { containers: container } } } },
      ],
    ] as const) {
      const reply = await api.post(path, body)
      assert.equal(reply.status, 201, reply.text)
    }
  })

  after(async () => {
    transport?.close()
    webhookClient?.close()
    await sar?.close()
    await agent?.close()
  })

  /** Every resource and subresource of every served group version, with each verb discovery lists. */
  async function routes(): Promise<Route[]> {
    const versions: { group: string; version: string; path: string }[] = []
    for (const version of (await api.get('/api')).body.versions as string[]) versions.push({ group: '', version, path: `/api/${version}` })
    for (const group of (await api.get('/apis')).body.groups as { name: string; versions: { version: string }[] }[])
      for (const { version } of group.versions) versions.push({ group: group.name, version, path: `/apis/${group.name}/${version}` })
    const out: Route[] = []
    for (const gv of versions) {
      const list = (await api.get(gv.path)).body.resources as { name: string; namespaced: boolean; kind: string; verbs: string[] }[]
      for (const r of list) {
        const [resource = '', subresource = ''] = r.name.split('/')
        for (const verb of r.verbs) out.push({ group: gv.group, version: gv.version, resource, subresource, namespaced: r.namespaced, kind: r.kind, verb })
      }
    }
    return out
  }

  function pathOf(route: Route): string {
    const base = route.group ? `/apis/${route.group}/${route.version}` : `/api/${route.version}`
    const ns = route.namespaced ? `/namespaces/${NS}` : ''
    const collection = `${base}${ns}/${route.resource}`
    if (!route.subresource && ['list', 'watch', 'create', 'deletecollection'].includes(route.verb))
      return route.verb === 'watch' ? `${collection}?watch=true&timeoutSeconds=1` : collection
    const one = `${collection}/${nameOf(route)}`
    if (!route.subresource) return one
    const sub = `${one}/${route.subresource}`
    if (route.subresource === 'proxy') return `${sub}/healthz`
    if (route.subresource === 'exec') return `${sub}?command=ls&stdout=true`
    if (route.subresource === 'portforward') return `${sub}?ports=8080`
    return sub
  }

  /** A body the handler can decode: the kind discovery names, with the name the route uses. */
  function bodyOf(route: Route): string | undefined {
    if (!['create', 'update', 'patch'].includes(route.verb) || CONNECT.has(`${route.resource}/${route.subresource}`)) return undefined
    if (route.verb === 'patch') return JSON.stringify({ metadata: { labels: { walked: 'yes' } } })
    const apiVersion = route.subresource === 'token' ? 'authentication.k8s.io/v1' : route.subresource === 'eviction' ? 'policy/v1' : route.group ? `${route.group}/${route.version}` : route.version
    const metadata: Record<string, string> = { name: route.subresource || route.verb === 'update' ? nameOf(route) : 'walked' }
    if (route.namespaced) metadata['namespace'] = NS
    return JSON.stringify({ apiVersion, kind: route.kind, metadata, ...(route.subresource === 'token' ? { spec: {} } : {}) })
  }

  async function send(route: Route): Promise<{ status: number; message: string }> {
    const headers: Record<string, string> = { ...walker.headers }
    let body = bodyOf(route)
    if (route.verb === 'update' && !CONNECT.has(`${route.resource}/${route.subresource}`)) {
      // An update sends the object as it is: what a client would PUT back.
      const current = await api.get(pathOf(route))
      if (current.status === 200) body = current.text
    }
    if (body !== undefined) headers['content-type'] = route.verb === 'patch' ? 'application/merge-patch+json' : 'application/json'
    const res = await api.server.fetch(new Request(`http://in-process${pathOf(route)}`, { method: METHODS[route.verb] ?? 'GET', headers, body }), walker.connection)
    // A watch answers its headers and then streams: its status is all the walk needs.
    if (route.verb === 'watch') {
      await res.body?.cancel()
      return { status: res.status, message: '' }
    }
    const text = await res.text()
    let message = ''
    try {
      message = String((JSON.parse(text) as { message?: unknown }).message ?? '')
    } catch {
      message = text.slice(0, 200)
    }
    return { status: res.status, message }
  }

  it('finds no route that skips authorization, or writes or connects without admission', async () => {
    const all = await routes()
    assert.ok(all.length > 200, `discovery listed only ${all.length} routes`)
    const problems: string[] = []
    const reachedAdmission = new Set<string>()
    for (const route of all) {
      const asked = sar.received.length
      const admittedBefore = admitted.length
      const agentBefore = agent.seen.length
      const { status, message } = await send(route)
      const name = label(route)
      const connect = CONNECT.has(`${route.resource}/${route.subresource}`)
      const gated = WRITE_VERBS.has(route.verb) || connect

      const reviews = sar.received.slice(asked).map((r) => r.body.spec)
      const expectedName = ['list', 'watch', 'deletecollection'].includes(route.verb) || (route.verb === 'create' && !route.subresource) ? '' : nameOf(route)
      const authorized = reviews.some((spec) => {
        const attrs = spec['resourceAttributes'] ?? {}
        return (
          spec['user'] === WALKER &&
          attrs.verb === route.verb &&
          (attrs.group ?? '') === route.group &&
          (attrs.resource ?? '') === route.resource &&
          (attrs.subresource ?? '') === route.subresource &&
          (attrs.namespace ?? '') === (route.namespaced ? NS : route.resource === 'namespaces' ? expectedName : '') &&
          (attrs.name ?? '') === expectedName
        )
      })
      if (!authorized) problems.push(`${name}: the authorizer was not asked with its attributes (answer ${status} ${message})`)
      if (!gated) continue

      if (status < 300) problems.push(`${name}: answered ${status} although admission refuses every write and CONNECT`)
      if (agent.seen.length > agentBefore) problems.push(`${name}: reached the node agent (${agent.seen.at(-1)?.path})`)
      const seen = admitted.slice(admittedBefore)
      // Only a route or object that is not there may answer before admission.
      if (!message.endsWith(REFUSAL) && status !== 404) problems.push(`${name}: answered ${status} (${message}) before admission`)
      if (message.endsWith(REFUSAL)) {
        reachedAdmission.add(name)
        const operation = connect ? 'CONNECT' : route.verb === 'create' ? 'CREATE' : route.verb.startsWith('delete') ? 'DELETE' : null
        const matches = seen.some(
          (a) =>
            a.group === route.group &&
            a.resource === route.resource &&
            a.subresource === route.subresource &&
            (route.resource === 'namespaces' || a.namespace === (route.namespaced ? NS : '')) &&
            (operation === null ? ['CREATE', 'UPDATE'].includes(a.operation) : a.operation === operation),
        )
        if (!matches) problems.push(`${name}: admission refused it but saw ${JSON.stringify(seen)}`)
      }
    }
    for (const name of MUST_REACH_ADMISSION) if (!reachedAdmission.has(name)) problems.push(`${name}: did not meet admission`)
    assert.deepEqual(problems, [])
  })
})
