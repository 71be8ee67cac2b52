/**
 * A KMS v2 plugin with the real daemon on a real etcd, and the rotation to
 * it finished with the rewrite endpoint: a Secret written under an aesgcm
 * key, the configuration file changed to put the plugin first (reloaded
 * automatically, no restart), a new Secret stored under
 * `k8s:enc:kms:v2:<name>:` (read straight from etcd, no plaintext), then
 * `kubectl create --raw /encryption/rewrite` moves the old one too and
 * prints its counts; both read back with kubectl.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { startKmsPlugin, type TestKmsPlugin } from '../integration/kms-plugin.js'
import { EtcdServer } from '../storage-contract/etcd-server.js'
import { Daemon } from './daemon.js'

const PASSWORD = 'correct-horse-battery-staple'
const KMS_PREFIX = 'k8s:enc:kms:v2:vault:'

describe('KMS v2 encryption on etcd, and the rewrite after a rotation to it (daemon)', () => {
  let plugin: TestKmsPlugin
  let etcd: EtcdServer
  const daemons: Daemon[] = []
  const files = mkdtempSync(join(tmpdir(), 'kms-etcd-e2e-'))
  before(async () => {
    plugin = await startKmsPlugin()
    etcd = await EtcdServer.start()
  })
  after(async () => {
    for (const d of daemons) await d.stop()
    await etcd?.destroy()
    await plugin?.close()
    rmSync(files, { recursive: true, force: true })
  })

  const configPath = join(files, 'encryption.json')
  function config(providers: object[]): void {
    writeFileSync(configPath, JSON.stringify({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'EncryptionConfiguration', resources: [{ resources: ['secrets'], providers }] }))
  }
  async function raw(key: string): Promise<Buffer> {
    const client = etcd.client()
    try {
      const value = await client.get(key).buffer()
      assert.ok(value, `${key} is stored`)
      return value
    } finally {
      client.close()
    }
  }
  const noPlaintext = (stored: Buffer) => assert.ok(!stored.includes(PASSWORD) && !stored.includes(Buffer.from(PASSWORD).toString('base64')))

  it('stores under the kms v2 prefix with no plaintext in etcd, and the rewrite moves a Secret of the old key to the plugin', async () => {
    const aesgcm = { aesgcm: { keys: [{ name: 'key1', secret: Buffer.alloc(32, 1).toString('base64') }] } }
    const kms = { kms: { apiVersion: 'v2', name: 'vault', endpoint: plugin.endpoint, timeout: '10s' } }
    config([aesgcm])
    const d = await Daemon.start([`--etcd-servers=${etcd.clientUrl}`, `--encryption-provider-config=${configPath}`, '--encryption-provider-config-automatic-reload'])
    daemons.push(d)
    await d.ok('create', 'secret', 'generic', 'old', `--from-literal=password=${PASSWORD}`)
    assert.equal((await raw('/registry/secrets/default/old')).subarray(0, 23).toString(), 'k8s:enc:aesgcm:v1:key1:')

    config([kms, aesgcm])
    // The file is polled: write Secrets until one is stored by the plugin (no timing asserted, only that it comes).
    let fresh: Buffer = Buffer.alloc(0)
    for (let i = 0; i < 60 && !fresh.subarray(0, KMS_PREFIX.length).equals(Buffer.from(KMS_PREFIX)); i++) {
      await d.kubectl('delete', 'secret', 'new', '--ignore-not-found')
      await d.ok('create', 'secret', 'generic', 'new', `--from-literal=password=${PASSWORD}`)
      fresh = await raw('/registry/secrets/default/new')
      if (i) await new Promise((r) => setTimeout(r, 250))
    }
    assert.equal(fresh.subarray(0, KMS_PREFIX.length).toString(), KMS_PREFIX)
    noPlaintext(fresh)
    assert.equal(await d.ok('get', '--raw', '/healthz/kms-providers'), 'ok')

    const output = await d.ok('create', '--raw', '/encryption/rewrite', '-f', '/dev/null')
    assert.match(output, /^done: 2 checked, 1 rewritten, 1 already current, 0 failed$/m)
    const moved = await raw('/registry/secrets/default/old')
    assert.equal(moved.subarray(0, KMS_PREFIX.length).toString(), KMS_PREFIX)
    noPlaintext(moved)
    for (const name of ['old', 'new']) {
      assert.equal(await d.ok('get', 'secret', name, '-o', 'jsonpath={.data.password}'), Buffer.from(PASSWORD).toString('base64'))
    }
  })
})
