/**
 * `/logs/` (`--enable-logs-handler`) through fetch, over the Node runtime's
 * log directory port on a temporary directory: administrators list and read
 * the files, a plain user gets 403, and no path leaves the directory.
 */
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { type ApiServer, createApiServer } from '../../core/index.js'
import { nodeLogFiles } from '../../runtimes/node/daemon/log-files.js'
import { TestClient } from './harness.js'

const tokens = [
  { token: 'admin-token', user: { username: 'root', groups: ['system:masters'] } },
  { token: 'user-token', user: { username: 'jane', groups: ['dev'] } },
]
const as = (token: string) => ({ headers: { authorization: `Bearer ${token}` }, connection: {} })

describe('/logs/', () => {
  const dir = mkdtempSync(join(tmpdir(), 'apiserver-logs-'))
  const logs = join(dir, 'log')
  let server: ApiServer
  let api: TestClient
  before(async () => {
    mkdirSync(join(logs, 'pods'), { recursive: true })
    writeFileSync(join(logs, 'kube-apiserver.log'), 'line one\nline two\n')
    writeFileSync(join(dir, 'secret.txt'), 'outside')
    symlinkSync(join(dir, 'secret.txt'), join(logs, 'escape.log'))
    server = createApiServer({ authentication: { tokens }, authorizationModes: ['RBAC'] }, { logFiles: nodeLogFiles(logs) })
    await server.ready
    api = new TestClient(server)
  })
  after(async () => {
    await server?.shutdown()
    rmSync(dir, { recursive: true, force: true })
  })

  it('lists the directory and serves a file as plain text to an administrator', async () => {
    const listing = await api.get('/logs/', as('admin-token'))
    assert.equal(listing.status, 200)
    assert.match(listing.headers.get('content-type') ?? '', /^text\/html/)
    assert.match(listing.text, /<a href="kube-apiserver\.log">kube-apiserver\.log<\/a>/)
    assert.match(listing.text, /<a href="pods\/">pods\/<\/a>/)
    const file = await api.get('/logs/kube-apiserver.log', as('admin-token'))
    assert.equal(file.status, 200)
    assert.equal(file.headers.get('content-type'), 'text/plain; charset=utf-8')
    assert.equal(file.text, 'line one\nline two\n')
    assert.equal((await api.get('/logs/pods', as('admin-token'))).status, 301)
  })

  it('refuses a user without get on /logs/*', async () => {
    const res = await api.get('/logs/kube-apiserver.log', as('user-token'))
    assert.equal(res.status, 403)
    assert.equal(res.body.reason, 'Forbidden')
    assert.match(res.body.message, /cannot get path "\/logs\/kube-apiserver\.log"/)
  })

  it('never serves a file outside the directory, by dot-dot or by link', async () => {
    for (const path of ['/logs/%2e%2e/secret.txt', '/logs/..%2fsecret.txt', '/logs/escape.log', '/logs/missing.log']) {
      const res = await api.get(path, as('admin-token'))
      assert.equal(res.status, 404, path)
      assert.doesNotMatch(res.text, /outside/)
    }
  })

  it('sends a file as long as it was when looked at, nothing written to it after', async () => {
    const growing = join(logs, 'growing.log')
    writeFileSync(growing, '')
    const files = nodeLogFiles(logs)
    // The log's writer adds a line between the server's look at the file and its read of it.
    const racing = { read: async (path: string) => files.read(path).finally(() => writeFileSync(growing, 'written later\n')) }
    const raced = createApiServer({ authentication: { tokens }, authorizationModes: ['RBAC'] }, { logFiles: racing })
    try {
      await raced.ready
      const res = await new TestClient(raced).get('/logs/growing.log', as('admin-token'))
      assert.equal(res.status, 200)
      assert.equal(res.headers.get('content-length'), '0')
      assert.equal(res.text, '')
    } finally {
      await raced.shutdown()
    }
  })

  it('is not served without the port', async () => {
    const plain = createApiServer({ authentication: { tokens }, authorizationModes: ['RBAC'] })
    try {
      await plain.ready
      assert.equal((await new TestClient(plain).get('/logs/', as('admin-token'))).status, 404)
    } finally {
      await plain.shutdown()
    }
  })
})
