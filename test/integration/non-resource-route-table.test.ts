/**
 * Every path the server routes, not only the API's resources, is behind
 * authentication and authorization. The walk takes the routes from the
 * server's own route table (so a route added later is walked without
 * anyone listing it), with every optional route the daemon can hold:
 * profiling, the log files, the flag and flow-control debug paths, the
 * encryption rewrite, issuer discovery and API aggregation. Each route is
 * sent over the Node listener with each method it takes, exactly as
 * written:
 * - without a credential it is a 401, over HTTP/1.1 and HTTP/2;
 * - with a user's token the authorization webhook is asked, with the path
 *   and the lowercase method as upstream asks for a non-resource request,
 *   and its denial is a 403.
 * The webhook allows what upstream's default roles give every
 * authenticated user (system:discovery, system:public-info-viewer), and
 * each route it does not allow is sent again dressed as one it does
 * (`/api/../debug/pprof/`, escaped dots and slashes): none of those is
 * answered with a success. Every answer, a 401 or a 403, is recorded by
 * audit: a real audit webhook receiver gets an event for each, with the
 * request's path, verb and code.
 */
import assert from 'node:assert/strict'
import { connect as http2Connect } from 'node:http2'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { routeTables } from '../../core/http/shared-router.js'
import type { ApiServer } from '../../core/server.js'
import type { TlsListener } from '../../runtimes/node/adapter/serve.js'
import { nodeLogFiles } from '../../runtimes/node/daemon/log-files.js'
import { nodeProfiler, type NodeProfiler } from '../../runtimes/node/daemon/profiler.js'
import { nodeWebhookClient, type NodeWebhookClient } from '../../runtimes/node/daemon/webhook-client.js'
import { readFileSync } from 'node:fs'
import { loadKubeconfigConnection } from '../../core/config/kubeconfig.js'
import { silentLogger } from '../../core/logging/logger.js'
import { parseCommandLine } from '../../core/options/flags/index.js'
import { auditOptions } from '../../runtimes/node/daemon/audit.js'
import { type AuditReceiver, startAuditReceiver } from './audit-receiver.js'
import { createTestServer } from './harness.js'
import { sendRaw, serveOnLoopback } from './node-listener.js'
import { authorizedBy, type ReceivedReview, type SarWebhook, startSarWebhook } from './sar-webhook.js'

const WALKER = 'route-walker'
const TOKEN = 'walker-token'

/** The non-resource paths upstream's default cluster roles grant every authenticated user (`*` ends a prefix, as in RBAC). */
const PUBLIC_PATHS = ['/healthz', '/livez', '/readyz', '/version', '/version/', '/api', '/api/*', '/apis', '/apis/*', '/openapi', '/openapi/*']
const isPublic = (path: string): boolean => PUBLIC_PATHS.some((rule) => (rule.endsWith('*') ? path.startsWith(rule.slice(0, -1)) : path === rule))
const allows = (review: ReceivedReview): boolean => {
  const attrs = review.body.spec['nonResourceAttributes'] as { path?: string; verb?: string } | undefined
  return attrs?.verb === 'get' && isPublic(attrs.path ?? '')
}

/**
 * What a route's method takes: hono's ALL is any method, and its GET routes
 * answer HEAD too. UPGRADE is a GET asking to upgrade the connection, which
 * the Node listener takes on a path of its own.
 */
const methodsOf = (method: string): string[] =>
  method === 'ALL' ? ['GET', 'HEAD', 'UPGRADE', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] : method === 'GET' ? ['GET', 'HEAD', 'UPGRADE'] : [method]
/** The verb upstream's authorizer is asked for a non-resource request: the lowercase method. */
const verbOf = (method: string): string => (method === 'UPGRADE' ? 'get' : method.toLowerCase())
/** A path of the route: each parameter and wildcard filled with a name. */
const fill = (route: string): string => route.replace(/:[^/]+/g, 'walk').replace(/\*/g, 'walk')

/** The same path, written to look like a public one to a check that reads it as sent. */
const disguises = (path: string): string[] => [
  `/api/..${path}`,
  `/api/%2e%2e${path}`,
  `/apis/.%2E${path}`,
  `/openapi/%2E%2E${path}`,
  `/healthz/..${path}`,
  `/version/../..${path}`,
  `/api/..%2f..${path}`,
  `/api/..%2F${path.slice(1)}`,
  `/api%2F..${path}`,
  `/apis/%2F..%2F${path.slice(1)}`,
  `/api/..\\${path.slice(1)}`,
  `/api;/..${path}`,
  `//api/..${path}`,
]

/** A request as written, the connection closed after it; a write carries an empty JSON object. */
function head(method: string, path: string, token?: string): string {
  const credential = token ? `Authorization: Bearer ${token}\r\n` : ''
  if (method === 'UPGRADE') return `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${credential}Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`
  const body = ['POST', 'PUT', 'PATCH'].includes(method) ? { headers: 'Content-Type: application/json\r\nContent-Length: 2\r\n', text: '{}' } : { headers: '', text: '' }
  return `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${credential}${body.headers}Connection: close\r\n\r\n${body.text}`
}

describe('every route of the server, resource or not, is behind authentication and authorization', () => {
  let sar: SarWebhook
  let webhookClient: NodeWebhookClient
  let profiler: NodeProfiler
  let server: ApiServer
  let listener: TlsListener
  let receiver: AuditReceiver
  /** The answers the walk got, by their Audit-Id, for the check that audit recorded each. */
  const audited = new Map<string, { method: string; path: string; status: number }>()
  const logs = mkdtempSync(join(tmpdir(), 'apiserver-route-walk-'))
  /** The server's routes, method and path, middleware left out. */
  let routes: (readonly [string, string])[]

  const send = async (method: string, path: string, token?: string) => {
    const answer = await sendRaw(listener.port, head(method, path, token))
    const auditId = /\r\naudit-id: ([^\r]+)\r\n/i.exec(answer.text)?.[1]
    if (auditId) audited.set(auditId, { method, path, status: answer.status })
    return answer
  }

  before(async () => {
    writeFileSync(join(logs, 'walk'), 'a log line\n')
    sar = await startSarWebhook((review) => (allows(review) ? { allowed: true } : { denied: false, reason: 'the route walker is not allowed this path' }))
    webhookClient = nodeWebhookClient()
    profiler = await nodeProfiler({ sampleHeap: false })
    receiver = await startAuditReceiver()
    const kubeconfig = receiver.kubeconfigFile()
    const command = parseCommandLine([`--audit-webhook-config-file=${kubeconfig}`, '--audit-webhook-mode=blocking'])
    if (command.action !== 'run') assert.fail(`expected run, got ${command.action}`)
    const audit = auditOptions(command.flags, { omitStages: ['RequestReceived'], rules: [{ level: 'Metadata' }] }, loadKubeconfigConnection(readFileSync(kubeconfig, 'utf8'), kubeconfig), silentLogger)
    assert.ok(audit)
    server = createTestServer(
      {
        authentication: { tokens: [{ token: TOKEN, user: { username: WALKER, groups: ['walkers'] } }], anonymous: false, serviceAccounts: { issuers: ['https://127.0.0.1'] } },
        ...authorizedBy(sar),
        encryption: { resources: [{ resources: [{ group: '', resource: 'secrets' }], providers: [{ type: 'identity' }] }] },
        aggregation: {},
        audit,
      },
      { webhookClient, profiler, logFiles: nodeLogFiles(logs) },
    )
    await server.ready
    listener = await serveOnLoopback(server)
    // A request fixes the server's route table and makes it the one used last.
    assert.equal((await send('GET', '/version', TOKEN)).status, 200)
    const table = routeTables().at(-1) ?? []
    for (const optional of ['/debug/pprof/:name', '/debug/flags/*', '/logs/*', '/encryption/rewrite', '/openid/v1/jwks', '/debug/api_priority_and_fairness/dump_queues']) {
      assert.ok(table.some(([, path]) => path === optional), `the route table has ${optional}`)
    }
    const seen = new Set<string>()
    routes = table.filter(([method, path]) => !(method === 'ALL' && path === '/*') && !seen.has(`${method} ${path}`) && seen.add(`${method} ${path}`))
  })

  after(async () => {
    await listener?.close()
    await server?.shutdown()
    webhookClient?.close()
    profiler?.close()
    await sar?.close()
    await receiver?.stop()
    rmSync(logs, { recursive: true, force: true })
  })

  it('answers every route without a credential with 401', async () => {
    assert.ok(routes.length >= 40, `the table has only ${routes.length} routes`)
    const problems: string[] = []
    for (const [method, route] of routes) {
      for (const m of methodsOf(method)) {
        const path = fill(route)
        const answer = await send(m, path)
        if (answer.status !== 401) problems.push(`${m} ${path}: ${answer.status} ${answer.text.split('\r\n\r\n')[1]?.slice(0, 120) ?? ''}`)
      }
    }
    assert.deepEqual(problems, [])
  })

  it('answers every route without a credential with 401 over HTTP/2 too', async () => {
    const session = http2Connect(`https://127.0.0.1:${listener.port}`, { rejectUnauthorized: false })
    after(() => session.close())
    const problems: string[] = []
    for (const [method, route] of routes) {
      for (const m of methodsOf(method).filter((m) => m !== 'UPGRADE')) {
        const path = fill(route)
        const status = await new Promise<number>((resolve, reject) => {
          const stream = session.request({ ':method': m, ':path': path }, { endStream: true })
          stream.once('response', (headers) => {
            stream.resume()
            resolve(Number(headers[':status']))
          })
          stream.once('error', reject)
        })
        if (status !== 401) problems.push(`${m} ${path}: ${status}`)
      }
    }
    assert.deepEqual(problems, [])
  })

  it('asks the authorizer for every route with its path and method, and answers its denial with 403', async () => {
    const problems: string[] = []
    let denied = 0
    for (const [method, route] of routes) {
      for (const m of methodsOf(method)) {
        const path = fill(route)
        const before = sar.received.length
        const answer = await send(m, path, TOKEN)
        const reviews = sar.received.slice(before).filter((r) => r.body.spec['user'] === WALKER)
        const asked = reviews.find((r) => {
          const attrs = r.body.spec['nonResourceAttributes'] as { path?: string; verb?: string } | undefined
          return attrs?.path === path && attrs.verb === verbOf(m)
        })
        if (!asked) {
          problems.push(`${m} ${path}: the authorizer was not asked for the path (answer ${answer.status}; asked ${JSON.stringify(reviews.map((r) => r.body.spec))})`)
          continue
        }
        if (allows(asked)) {
          if (answer.status === 401 || answer.status === 403) problems.push(`${m} ${path}: allowed, yet answered ${answer.status}`)
        } else {
          denied++
          if (answer.status !== 403) problems.push(`${m} ${path}: denied, yet answered ${answer.status}`)
          else if (m !== 'HEAD' && !answer.text.includes(`User \\"${WALKER}\\" cannot ${verbOf(m)} path \\"${path}\\"`)) problems.push(`${m} ${path}: 403 without upstream's message: ${answer.text.split('\r\n\r\n')[1]}`)
        }
      }
    }
    assert.deepEqual(problems, [])
    assert.ok(denied > 100, `only ${denied} requests were denied`)
  })

  it('serves a denied route to no path dressed as a public one', async () => {
    const requests = routes.flatMap(([method, route]) => {
      const path = fill(route)
      return isPublic(path) ? [] : methodsOf(method).flatMap((m) => disguises(path).map((disguised) => [m, disguised] as const))
    })
    const problems: string[] = []
    // Eight connections at a time: each request is denied on its own, so none waits on another's answer.
    for (let i = 0; i < requests.length; i += 8) {
      await Promise.all(
        requests.slice(i, i + 8).map(async ([m, disguised]) => {
          const answer = await send(m, disguised, TOKEN)
          if (answer.status < 400) problems.push(`${m} ${disguised}: ${answer.status} ${answer.text.split('\r\n\r\n')[1]?.slice(0, 120) ?? ''}`)
        }),
      )
    }
    assert.deepEqual(problems, [])
    assert.ok(requests.length > 200, `only ${requests.length} disguised requests were sent`)
  })

  it('records every answer of the walk in audit, with its path, verb and code', async () => {
    assert.ok(audited.size > 300, `only ${audited.size} answers carried an Audit-Id`)
    const problems: string[] = []
    for (let i = 0; ; i++) {
      // A request's last stage: ResponseComplete, or ResponseStarted for a 401, as upstream records a failed authentication.
      const events = new Map(receiver.events().map((e) => [e['auditID'] as string, e]))
      problems.length = 0
      for (const [auditId, { method, path, status }] of audited) {
        const event = events.get(auditId)
        if (!event) problems.push(`${method} ${path} (${status}): no audit event`)
        // A disguised path can read as a resource request, whose verb is the resource's (HEAD is a get).
        else if (event['requestURI'] !== path || event['responseStatus']?.code !== status || (!event['objectRef'] && event['verb'] !== verbOf(method)))
          problems.push(`${method} ${path} (${status}): recorded as ${event['verb']} ${event['requestURI']} (${event['responseStatus']?.code})`)
      }
      // Blocking mode sends each event before its answer; the wait covers a batch still on its way.
      if (!problems.length || i === 100) break
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    assert.deepEqual(problems.slice(0, 20), [])
  })
})
