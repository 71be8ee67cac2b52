/**
 * The server under Bun, driven over the network as a user would: start
 * `bun runtimes/bun/main.ts --port 0`, read its ready line, then create and
 * read back a ConfigMap over HTTPS with the printed token. Runs under Node;
 * a missing bun binary is a failure, never a skip (docs/architecture.md).
 */
import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { after, before, describe, it } from 'node:test'

const ROOT = join(import.meta.dirname, '..', '..')
const BUN = join(ROOT, 'node_modules', '.bin', 'bun')

interface ReadyLine {
  ready: true
  url: string
  token: string
  caCertificate?: string
}

interface Reply {
  status: number
  body: Record<string, unknown>
}

/** Starts the Bun server and resolves with its ready line; rejects with its stderr if it exits first. */
function startBun(dataDir: string): Promise<{ child: ChildProcess; ready: ReadyLine }> {
  return new Promise((resolve, reject) => {
    const child = spawn(BUN, ['runtimes/bun/main.ts', '--port', '0', '--data-dir', dataDir], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
    let stderr = ''
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`bun printed no ready line within 20 s; stderr: ${stderr}`))
    }, 20_000)
    child.once('error', (err) => {
      clearTimeout(timer)
      reject(new Error(`cannot run ${BUN}: ${err.message}`))
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`bun exited with ${code} before it was ready; stderr: ${stderr}`))
    })
    const lines = createInterface({ input: child.stdout! })
    lines.once('line', (line) => {
      clearTimeout(timer)
      resolve({ child, ready: JSON.parse(line) as ReadyLine })
    })
  })
}

function call(ready: ReadyLine, method: string, path: string, body?: unknown): Promise<Reply> {
  const url = new URL(path, ready.url)
  const payload = body === undefined ? undefined : JSON.stringify(body)
  const headers: Record<string, string> = { authorization: `Bearer ${ready.token}`, accept: 'application/json' }
  if (payload !== undefined) headers['content-type'] = 'application/json'
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest
  return new Promise((resolve, reject) => {
    const req = send(url, { method, headers, agent: false, ...(ready.caCertificate ? { ca: ready.caCertificate } : {}) }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        text += chunk
      })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(payload)
  })
}

async function stopBun(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), 3000)
  await exited
  clearTimeout(timer)
}

describe('the API server under Bun', () => {
  let child: ChildProcess | undefined
  let ready: ReadyLine
  const dataDir = mkdtempSync(join(tmpdir(), 'apiserver-bun-'))

  before(async () => {
    assert.ok(existsSync(BUN), `bun is required for this suite and was not found at ${BUN} (it is a devDependency: npm install)`)
    const started = await startBun(dataDir)
    child = started.child
    ready = started.ready
  })

  after(async () => {
    await stopBun(child)
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('announces a loopback HTTPS URL, a token and the CA to trust', () => {
    assert.match(ready.url, /^https:\/\/127\.0\.0\.1:\d+$/)
    assert.ok(ready.token.length >= 32)
    assert.match(ready.caCertificate ?? '', /^-----BEGIN CERTIFICATE-----/)
  })

  it('creates a ConfigMap in default (201 with the object) and reads it back (200, same data)', async () => {
    const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'from-bun' }, data: { greeting: 'hello', count: '3' } }
    const created = await call(ready, 'POST', '/api/v1/namespaces/default/configmaps', configMap)
    assert.equal(created.status, 201, JSON.stringify(created.body))
    assert.equal(created.body['kind'], 'ConfigMap')
    const meta = created.body['metadata'] as Record<string, unknown>
    assert.equal(meta['name'], 'from-bun')
    assert.equal(meta['namespace'], 'default')
    assert.ok(meta['uid'], 'the created object has a uid')
    assert.ok(meta['resourceVersion'], 'the created object has a resourceVersion')
    assert.deepEqual(created.body['data'], configMap.data)

    const got = await call(ready, 'GET', '/api/v1/namespaces/default/configmaps/from-bun')
    assert.equal(got.status, 200, JSON.stringify(got.body))
    assert.deepEqual(got.body['data'], configMap.data)
    assert.deepEqual(got.body['metadata'], created.body['metadata'])
  })

  it('keeps its objects in the embedded store across a restart', async () => {
    const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kept' }, data: { a: 'b' } }
    assert.equal((await call(ready, 'POST', '/api/v1/namespaces/default/configmaps', configMap)).status, 201)
    await stopBun(child)
    const restarted = await startBun(dataDir)
    child = restarted.child
    ready = restarted.ready
    const got = await call(ready, 'GET', '/api/v1/namespaces/default/configmaps/kept')
    assert.equal(got.status, 200, JSON.stringify(got.body))
    assert.deepEqual(got.body['data'], { a: 'b' })
  })

  it('refuses a request without the token with 401 Unauthorized', async () => {
    const anonymous = await call({ ...ready, token: 'not-the-token' }, 'GET', '/api/v1/namespaces/default/configmaps')
    assert.equal(anonymous.status, 401)
    assert.equal(anonymous.body['reason'], 'Unauthorized')
  })
})
