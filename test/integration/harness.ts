/** A small client for driving a server through `fetch`, as a test author would. */
import assert from 'node:assert/strict'
import { ADMIN_IDENTITY, type ApiServer, type ApiServerOptions, createApiServer } from '../../core/index.js'
import type { ConnectionInfo, ServerPorts } from '../../core/ports.js'
import { nodeYamlDecoder } from '../../runtimes/node/daemon/yaml-decoder.js'

export interface Reply {
  status: number
  headers: Headers
  text: string
  body: any
}

export interface CallOptions {
  body?: unknown
  headers?: Record<string, string>
  connection?: ConnectionInfo
}

export class TestClient {
  constructor(readonly server: ApiServer) {}

  async call(method: string, path: string, opts: CallOptions = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...opts.headers }
    let body: NonNullable<RequestInit['body']> | undefined
    if (opts.body !== undefined) {
      body = typeof opts.body === 'string' || opts.body instanceof Uint8Array ? (opts.body as NonNullable<RequestInit['body']>) : JSON.stringify(opts.body)
      headers['content-type'] ??= 'application/json'
    }
    const res = await this.server.fetch(new Request(`http://in-process${path}`, { method, headers, body }), opts.connection)
    const text = await res.text()
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      parsed = undefined
    }
    return { status: res.status, headers: res.headers, text, body: parsed }
  }

  get = (path: string, opts?: CallOptions) => this.call('GET', path, opts)
  post = (path: string, body: unknown, opts?: CallOptions) => this.call('POST', path, { ...opts, body })
  put = (path: string, body: unknown, opts?: CallOptions) => this.call('PUT', path, { ...opts, body })
  delete = (path: string, opts?: CallOptions) => this.call('DELETE', path, opts)
  patch = (path: string, body: unknown, type: string, opts?: CallOptions) =>
    this.call('PATCH', path, { ...opts, body, headers: { 'content-type': type, ...opts?.headers } })

  /**
   * Reads the object, changes it and writes it back, reading again after a
   * 409 Conflict as clients do: the server's controllers write some kinds'
   * status just after a create or an update (a CRD's conditions, a policy's
   * type check), so a write from an older read can meet one.
   */
  async update(path: string, change: (current: any) => unknown, attempts = 5): Promise<Reply> {
    for (let attempt = 1; ; attempt++) {
      const reply = await this.put(path, change((await this.get(path)).body))
      if (reply.status !== 409 || attempt >= attempts) return reply
    }
  }
}

/**
 * createApiServer for tests that act as the embedding program: requests
 * without connection info run as the administrator, because the test opts in
 * (the server's own default makes them anonymous). Options given win.
 */
/**
 * `TEST_YAML_DECODER=worker` sends every YAML body of the tests that use
 * this harness through the Node runtime's worker thread, whatever its size:
 * the answers must be the same as on the serving thread.
 */
const yamlDecoder = process.env['TEST_YAML_DECODER'] === 'worker' ? nodeYamlDecoder({ offThreadFrom: 0 }) : undefined

export function createTestServer(options: ApiServerOptions = {}, ports: Partial<ServerPorts> = {}): ApiServer {
  return createApiServer({ embeddedIdentity: ADMIN_IDENTITY, ...options }, { ...(yamlDecoder ? { yamlDecoder } : {}), ...ports })
}

export async function startServer(options: ApiServerOptions = {}): Promise<TestClient> {
  const server = createTestServer({ bookmarkIntervalMs: 50, ...options })
  await server.ready
  return new TestClient(server)
}

/** Reads watch lines from a streaming response until `count` events arrived. */
export async function readEvents(res: Response, count: number): Promise<{ type: string; object: any }[]> {
  const reader = res.body!.getReader()
  const decoder = new TextDecoder()
  const events: { type: string; object: any }[] = []
  let buffer = ''
  while (events.length < count) {
    const { done, value } = await reader.read()
    if (done) break
    buffer += decoder.decode(value, { stream: true })
    let nl = buffer.indexOf('\n')
    while (nl >= 0) {
      events.push(JSON.parse(buffer.slice(0, nl)))
      buffer = buffer.slice(nl + 1)
      nl = buffer.indexOf('\n')
    }
  }
  await reader.cancel()
  return events
}

/** Polls `check` until it returns true; fails with `what` after the deadline. */
export async function eventually(what: string, check: () => Promise<boolean>, deadlineMs = 5000): Promise<void> {
  const end = Date.now() + deadlineMs
  for (;;) {
    if (await check()) return
    if (Date.now() > end) assert.fail(`timed out waiting until ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** Runs `check` until it stops throwing (an assertion that holds once the server has caught up); past the deadline, its last failure. */
export async function untilPasses(check: () => Promise<void>, deadlineMs = 15_000): Promise<void> {
  const deadline = Date.now() + deadlineMs
  for (;;) {
    try {
      return await check()
    } catch (err) {
      if (Date.now() > deadline) throw err
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
}

/**
 * Sends `request`, then a GET as the next request read from a socket would
 * arrive; says which was answered first. Work done in time slices lets the
 * GET through first.
 */
export async function besideAGet<T>(api: TestClient, request: () => Promise<T>): Promise<{ answer: T; order: string[] }> {
  const order: string[] = []
  const first = request().then((r) => (order.push('request'), r))
  const get = new Promise((resolve) => setTimeout(resolve, 0))
    .then(() => api.get('/api/v1/namespaces/default'))
    .then((r) => (order.push('get'), r))
  const [answer, got] = await Promise.all([first, get])
  assert.equal(got.status, 200, got.text)
  return { answer, order }
}

/** An Invalid answer's causes as `field: message` lines, as a reader compares them. */
export function causeLines(res: Reply): string[] {
  return ((res.body?.details?.causes ?? []) as { field?: string; message: string }[]).map((c) => `${c.field ?? ''}: ${c.message}`)
}
