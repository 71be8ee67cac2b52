/**
 * Identity headers read line by line on the Node listener, as Go's server
 * keeps them: each `Impersonate-Group` and `Impersonate-Extra-*` line is one
 * value (a group `a,b` on one line is the group `a,b`, not two), and
 * `Impersonate-User` is its first line. Fetch's Headers joins repeated lines
 * with ", ", so the listener hands core the lines it read; over HTTP/1.1 and
 * HTTP/2 alike, and for the front proxy's headers too (through `fetch` with
 * the lines given, as the listener gives them).
 */
import assert from 'node:assert/strict'
import { connect as http2Connect } from 'node:http2'
import { after, before, describe, it } from 'node:test'
import { connect } from 'node:tls'
import type { ConnectionInfo } from '../../core/index.js'
import type { ApiServer } from '../../core/server.js'
import type { TlsListener } from '../../runtimes/node/adapter/serve.js'
import { serveOnLoopback } from './node-listener.js'
import { createTestServer, startServer } from './harness.js'

const WHOAMI = '/apis/authentication.k8s.io/v1/selfsubjectreviews'
const REVIEW = JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview', metadata: {} })
const tokens = [
  { token: 'admin-token', user: { username: 'admin', groups: ['system:masters'] } },
  { token: 'alice-token', user: { username: 'alice', groups: ['dev'] } },
]

/** POSTs a SelfSubjectReview over HTTP/1.1 with the header lines exactly as written; the status and the body. */
async function reviewOverHttp1(port: number, lines: string[]): Promise<{ status: number; body: string }> {
  const { status, body } = await reviewOverHttp1WithHead(port, lines)
  return { status, body }
}

/** reviewOverHttp1 with the answer's headers too (names in lower case, the last line of each). */
async function reviewOverHttp1WithHead(port: number, lines: string[]): Promise<{ status: number; body: string; headers: Map<string, string> }> {
  const head = [`POST ${WHOAMI} HTTP/1.1`, 'Host: 127.0.0.1', 'Content-Type: application/json', `Content-Length: ${REVIEW.length}`, 'Connection: close', ...lines]
  const text = await new Promise<string>((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }, () =>
      socket.write(`${head.join('\r\n')}\r\n\r\n${REVIEW}`),
    )
    let received = ''
    socket.on('data', (d: Buffer) => (received += d.toString('utf8')))
    socket.on('end', () => resolve(received))
    socket.on('error', reject)
  })
  const [answerHead = '', ...rest] = text.split('\r\n\r\n')
  const [statusLine = '', ...headerLines] = answerHead.split('\r\n')
  const headers = new Map(headerLines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]))
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1] ?? 0), body: rest.join('\r\n\r\n'), headers }
}

/** The same over HTTP/2, each array value sent as a header field of its own. */
function reviewOverHttp2(port: number, headers: Record<string, string | string[]>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const session = http2Connect(`https://127.0.0.1:${port}`, { rejectUnauthorized: false })
    session.on('error', reject)
    const stream = session.request({ ':method': 'POST', ':path': WHOAMI, 'content-type': 'application/json', ...headers })
    let status = 0
    let body = ''
    stream.on('response', (h) => (status = Number(h[':status'])))
    stream.on('data', (d: Buffer) => (body += d.toString('utf8')))
    stream.on('end', () => {
      session.close()
      resolve({ status, body })
    })
    stream.on('error', reject)
    stream.end(REVIEW)
  })
}

/** The userInfo of a SelfSubjectReview's answer (the status's message when it has none). */
function userInfoOf(answer: { status: number; body: string }): unknown {
  const body = JSON.parse(answer.body) as { status?: { userInfo?: unknown }; message?: string }
  return answer.status === 201 ? body.status?.userInfo : `${answer.status} ${body.message}`
}

describe('identity header lines on the Node listener', () => {
  let server: ApiServer
  let listener: TlsListener

  before(async () => {
    server = createTestServer({ authorizationModes: ['RBAC'], authentication: { tokens } })
    await server.ready
    listener = await serveOnLoopback(server)
  })
  after(async () => {
    await listener?.close()
    await server?.shutdown()
  })

  it('takes each Impersonate-Group and Impersonate-Extra line as one value, commas and all, over HTTP/1.1', async () => {
    const answer = await reviewOverHttp1(listener.port, [
      'Authorization: Bearer admin-token',
      'Impersonate-User: bob',
      'Impersonate-Group: ops,dev',
      'Impersonate-Group: qa',
      'Impersonate-Extra-Scopes: view,edit',
      'Impersonate-Extra-Scopes: list',
    ])
    assert.deepEqual(userInfoOf(answer), {
      username: 'bob',
      groups: ['ops,dev', 'qa', 'system:authenticated'],
      extra: { scopes: ['view,edit', 'list'] },
    })
  })

  it('takes the first Impersonate-User and Impersonate-Uid line, as Go reads one header', async () => {
    const answer = await reviewOverHttp1(listener.port, [
      'Authorization: Bearer admin-token',
      'Impersonate-User: bob',
      'Impersonate-User: eve',
      'Impersonate-Uid: b-1',
      'Impersonate-Uid: e-1',
    ])
    assert.deepEqual(userInfoOf(answer), { username: 'bob', uid: 'b-1', groups: ['system:authenticated'] })
  })

  it('echoes the first Audit-ID line, as Go reads one header, not the lines joined', async () => {
    const answer = await reviewOverHttp1WithHead(listener.port, ['Authorization: Bearer admin-token', 'Audit-ID: first-id', 'Audit-ID: second-id'])
    assert.equal(answer.status, 201, answer.body)
    assert.equal(answer.headers.get('audit-id'), 'first-id')
  })

  it('authenticates with the first Authorization line, as Go reads one header, not the lines joined', async () => {
    assert.deepEqual(userInfoOf(await reviewOverHttp1(listener.port, ['Authorization: Bearer alice-token', 'Authorization: Bearer admin-token'])), {
      username: 'alice',
      groups: ['dev', 'system:authenticated'],
    })
    // The first line decides: a second line's good token does not rescue a bad first one.
    const refused = await reviewOverHttp1(listener.port, ['Authorization: Bearer wrong-token', 'Authorization: Bearer admin-token'])
    assert.equal(refused.status, 401, refused.body)
  })

  it('decodes the body by the first Content-Type line and answers in the first Accept line', async () => {
    // The helper's own Content-Type line (application/json) comes first; a second one is not read.
    const answer = await reviewOverHttp1WithHead(listener.port, ['Authorization: Bearer admin-token', 'Content-Type: text/plain', 'Accept: application/json', 'Accept: application/yaml'])
    assert.equal(answer.status, 201, answer.body)
    assert.match(answer.headers.get('content-type') ?? '', /^application\/json/)
    assert.equal((JSON.parse(answer.body) as { kind: string }).kind, 'SelfSubjectReview')
  })

  it('reads the lines of HTTP/2 header fields the same way', async () => {
    const answer = await reviewOverHttp2(listener.port, {
      authorization: 'Bearer admin-token',
      'impersonate-user': 'bob',
      'impersonate-group': ['ops,dev', 'qa'],
    })
    assert.deepEqual(userInfoOf(answer), { username: 'bob', groups: ['ops,dev', 'qa', 'system:authenticated'] })
  })

  it('refuses a caller without the right to impersonate, naming the group as its line names it', async () => {
    const answer = await reviewOverHttp1(listener.port, ['Authorization: Bearer alice-token', 'Impersonate-User: alice', 'Impersonate-Group: dev,system:masters'])
    assert.equal(answer.status, 403, answer.body)
    assert.equal(
      (JSON.parse(answer.body) as { message: string }).message,
      'users "alice" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope',
    )
  })
})

describe('front proxy header lines', () => {
  const PROXY_CA = '-----BEGIN CERTIFICATE-----\nproxy\n-----END CERTIFICATE-----\n'
  const proxy: ConnectionInfo = {
    clientCertificate: { verified: false, organizations: [], commonName: 'front-proxy-client', verifiedByRequestHeaderCA: true },
  }
  const requestHeader = {
    usernameHeaders: ['X-Remote-User'],
    groupHeaders: ['X-Remote-Group'],
    extraHeaderPrefixes: ['X-Remote-Extra-'],
    allowedNames: ['front-proxy-client'],
    clientCA: PROXY_CA,
  }

  it('takes each group and extra line as one value and the user from the first line, skipping empty lines as upstream', async () => {
    const api = await startServer({ authorizationModes: ['AlwaysDeny'], authentication: { requestHeader } })
    const headerLines = ['X-Remote-User', 'admin', 'X-Remote-User', 'eve', 'X-Remote-Group', 'system:masters', 'X-Remote-Group', 'a,b', 'X-Remote-Group', '', 'x-remote-extra-scopes', 'view,edit']
    const headers = { 'x-remote-user': 'admin, eve', 'x-remote-group': 'system:masters, a,b, ', 'x-remote-extra-scopes': 'view,edit' }
    const r = await api.post(WHOAMI, JSON.parse(REVIEW), { connection: { ...proxy, headerLines }, headers })
    assert.equal(r.status, 201, r.text)
    assert.deepEqual(r.body.status.userInfo, { username: 'admin', groups: ['system:masters', 'a,b', 'system:authenticated'], extra: { scopes: ['view,edit'] } })
  })
})

/**
 * Thousands of distinct identity headers: each name's lines were looked up
 * by reading every line again, some ten seconds for 20,000 front-proxy extra
 * headers, read before the proxy's certificate was checked. The lines are now
 * read once (counted here through a proxy of the array, not timed), and not
 * at all for a caller the certificate does not prove to be the proxy.
 */
describe('many distinct identity headers', () => {
  const COUNT = 20_000

  /** The lines and the number of times any line was read. */
  function countedLines(lines: string[]): { lines: string[]; reads: () => number } {
    let reads = 0
    const counted = new Proxy(lines, {
      get(target, key, receiver) {
        if (typeof key === 'string' && /^\d+$/.test(key)) reads++
        return Reflect.get(target, key, receiver) as unknown
      },
    })
    return { lines: counted, reads: () => reads }
  }

  function extraHeaders(prefix: string, first: string[]): { lines: string[]; headers: Record<string, string> } {
    const lines = [...first]
    const headers: Record<string, string> = {}
    for (let i = 0; i + 1 < first.length; i += 2) headers[first[i]!.toLowerCase()] = first[i + 1]!
    for (let i = 0; i < COUNT; i++) {
      lines.push(`${prefix}k${i}`, `v${i}`)
      headers[`${prefix.toLowerCase()}k${i}`] = `v${i}`
    }
    return { lines, headers }
  }

  const requestHeader = { usernameHeaders: ['X-Remote-User'], groupHeaders: ['X-Remote-Group'], extraHeaderPrefixes: ['X-Remote-Extra-'], allowedNames: ['front-proxy-client'] }
  const proxyCertificate = { verified: false, organizations: [], commonName: 'front-proxy-client', verifiedByRequestHeaderCA: true }

  it(`takes ${COUNT} front-proxy extra headers, each line read a bounded number of times`, async () => {
    const api = await startServer({ authorizationModes: ['AlwaysDeny'], authentication: { requestHeader: { ...requestHeader, clientCA: 'proxy' } } })
    const { lines, headers } = extraHeaders('X-Remote-Extra-', ['X-Remote-User', 'admin', 'X-Remote-Group', 'system:masters'])
    const counted = countedLines(lines)
    const r = await api.post(WHOAMI, JSON.parse(REVIEW), { connection: { clientCertificate: proxyCertificate, headerLines: counted.lines }, headers })
    assert.equal(r.status, 201, r.text.slice(0, 300))
    const extra = r.body.status.userInfo.extra as Record<string, string[]>
    assert.equal(Object.keys(extra).length, COUNT)
    assert.deepEqual(extra[`k${COUNT - 1}`], [`v${COUNT - 1}`])
    assert.ok(counted.reads() <= 4 * lines.length, `${counted.reads()} reads of ${lines.length} lines`)
    await api.server.shutdown()
  })

  it(`does not read ${COUNT} front-proxy extra headers from a caller the certificate does not prove to be the proxy`, async () => {
    const api = await startServer({ authorizationModes: ['AlwaysDeny'], authentication: { requestHeader: { ...requestHeader, clientCA: 'proxy' } } })
    const { lines, headers } = extraHeaders('X-Remote-Extra-', ['X-Remote-User', 'admin', 'X-Remote-Group', 'system:masters'])
    for (const clientCertificate of [undefined, { ...proxyCertificate, verifiedByRequestHeaderCA: false }, { ...proxyCertificate, commonName: 'someone-else' }]) {
      const counted = countedLines(lines)
      const r = await api.post(WHOAMI, JSON.parse(REVIEW), { connection: { ...(clientCertificate ? { clientCertificate } : {}), headerLines: counted.lines }, headers })
      // Not the proxy's system:masters user (who would have its review, 201): anonymous and forbidden, or refused.
      assert.ok(r.status === 401 || (r.status === 403 && r.text.includes('system:anonymous')), r.text.slice(0, 300))
      assert.ok(counted.reads() <= lines.length, `${counted.reads()} reads of ${lines.length} lines`)
    }
    await api.server.shutdown()
  })

  it(`impersonates with ${COUNT} extra headers and as many groups, each line read a bounded number of times`, async () => {
    const api = await startServer({ authorizationModes: ['RBAC'], authentication: { tokens } })
    const groups: string[] = []
    for (let i = 0; i < COUNT; i++) groups.push('Impersonate-Group', `g${i}`)
    const { lines, headers } = extraHeaders('Impersonate-Extra-', ['Authorization', 'Bearer admin-token', 'Impersonate-User', 'bob', ...groups])
    headers['impersonate-group'] = groups.filter((_, i) => i % 2 === 1).join(', ')
    const counted = countedLines(lines)
    const r = await api.post(WHOAMI, JSON.parse(REVIEW), { connection: { headerLines: counted.lines }, headers })
    assert.equal(r.status, 201, r.text.slice(0, 300))
    const userInfo = r.body.status.userInfo as { username: string; groups: string[]; extra: Record<string, string[]> }
    assert.equal(userInfo.username, 'bob')
    assert.equal(userInfo.groups.length, COUNT + 1)
    assert.equal(Object.keys(userInfo.extra).length, COUNT)
    assert.ok(counted.reads() <= 4 * lines.length, `${counted.reads()} reads of ${lines.length} lines`)
    await api.server.shutdown()
  })
})
