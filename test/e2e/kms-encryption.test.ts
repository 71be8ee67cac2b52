/**
 * A KMS v2 plugin with the real daemon on the embedded store: the store's
 * files hold the Secret only under upstream's `k8s:enc:kms:v2:<name>:`
 * prefix, never its plaintext; kubectl reads it back; the health check
 * `kms-providers` answers ok.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { startKmsPlugin, type TestKmsPlugin } from '../integration/kms-plugin.js'
import { Daemon } from './daemon.js'

const PASSWORD = 'correct-horse-battery-staple'

describe('KMS v2 encryption on the embedded store (daemon)', () => {
  let plugin: TestKmsPlugin
  const files = mkdtempSync(join(tmpdir(), 'kms-e2e-'))
  before(async () => {
    plugin = await startKmsPlugin()
  })
  after(async () => {
    await plugin.close()
    rmSync(files, { recursive: true, force: true })
  })

  it('stores a Secret under the kms v2 prefix with no plaintext, reads it back, and reports the plugin healthy', async () => {
    const path = join(files, 'encryption.json')
    const providers = [{ kms: { apiVersion: 'v2', name: 'vault', endpoint: plugin.endpoint, timeout: '10s' } }, { identity: {} }]
    writeFileSync(path, JSON.stringify({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'EncryptionConfiguration', resources: [{ resources: ['secrets'], providers }] }))
    const d = await Daemon.start([`--encryption-provider-config=${path}`])
    try {
      await d.ok('create', 'secret', 'generic', 'sealed', `--from-literal=password=${PASSWORD}`)
      assert.equal(await d.ok('get', 'secret', 'sealed', '-o', 'jsonpath={.data.password}'), Buffer.from(PASSWORD).toString('base64'))
      const bytes = Buffer.concat(readdirSync(d.dataDir).map((f) => readFileSync(join(d.dataDir, f))))
      assert.ok(bytes.includes('k8s:enc:kms:v2:vault:'))
      assert.ok(!bytes.includes(PASSWORD) && !bytes.includes(Buffer.from(PASSWORD).toString('base64')))
      assert.equal(await d.ok('get', '--raw', '/healthz/kms-providers'), 'ok')
      assert.ok(plugin.calls.encrypt >= 1)
    } finally {
      await d.stop()
    }
  })
})
