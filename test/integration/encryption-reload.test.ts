/**
 * `--encryption-provider-config-automatic-reload`: the file watched by the
 * Node runtime; a valid change takes effect for new writes without a
 * restart (values written before stay readable through the new file's
 * providers); a file that does not load, or whose KMS plugin does not
 * answer, is logged and the configuration in effect stays; with reload on,
 * the KMS health check is the combined `kms-providers`, present even
 * without KMS.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { loadEncryptionConfiguration } from '../../core/config/encryption.js'
import { EncryptionAtRest } from '../../core/encryption/encryption-at-rest.js'
import { parseCommandLine } from '../../core/options/flags/index.js'
import { MemoryStorage } from '../../core/storage/memory.js'
import { watchEncryptionConfig, type ReloadOutcome } from '../../runtimes/node/daemon/encryption-config-watch.js'
import { nodeKmsClients } from '../../runtimes/node/daemon/kms-clients.js'
import { parsePrometheusText, sampleValue } from '../helpers/prometheus-text.js'
import { createTestServer, TestClient } from './harness.js'

const SECRETS = '/api/v1/namespaces/default/secrets'
const PASSWORD = Buffer.from('correct horse battery staple').toString('base64')
const dir = mkdtempSync(join(tmpdir(), 'encryption-reload-'))
after(() => rmSync(dir, { recursive: true, force: true }))

const file = (providers: object[]): string =>
  JSON.stringify({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'EncryptionConfiguration', resources: [{ resources: ['secrets'], providers }] })
const aesgcm = (name: string, fill: number) => ({ aesgcm: { keys: [{ name, secret: Buffer.alloc(32, fill).toString('base64') }] } })

describe('automatic reload of the encryption configuration', () => {
  it('puts a valid new file in effect without a restart, and keeps the old configuration for a broken one', async () => {
    const path = join(dir, 'encryption.json')
    writeFileSync(path, file([aesgcm('one', 1)]))
    const encryption = new EncryptionAtRest(loadEncryptionConfiguration(file([aesgcm('one', 1)]), path, { reload: true }), { kms: nodeKmsClients, reload: true })
    const storage = new MemoryStorage({ transformerFor: (key) => encryption.forKey(key) })
    const server = createTestServer({ watchCache: false }, { storage, valueTransformers: encryption })
    await server.ready
    const client = new TestClient(server)
    const held = (name: string) => Buffer.from(storage.heldValue(`/registry/secrets/default/${name}`) as Uint8Array).toString('latin1')
    const outcomes: ReloadOutcome[] = []
    const logged: string[] = []
    const logger = { debug() {}, info() {}, warn() {}, error: (_: object, message: string) => void logged.push(message) }
    const command = parseCommandLine([`--encryption-provider-config=${path}`, '--encryption-provider-config-automatic-reload'])
    if (command.action !== 'run') assert.fail(command.action)
    const stop = watchEncryptionConfig(path, encryption, command.flags.values, logger, (o) => outcomes.push(o))
    const reloads = async (count: number): Promise<void> => {
      // The file is polled; no timing is asserted, only that the change is seen.
      for (let i = 0; i < 300 && outcomes.length < count; i++) await new Promise((r) => setTimeout(r, 100))
      assert.equal(outcomes.length, count, 'the change was seen')
    }
    try {
      assert.equal((await client.get('/healthz/kms-providers')).text, 'ok', 'present without KMS when reload is on')
      await client.post(SECRETS, { metadata: { name: 'before' }, data: { password: PASSWORD } })
      assert.ok(held('before').startsWith('k8s:enc:aesgcm:v1:one:'))

      writeFileSync(path, file([aesgcm('two', 2), aesgcm('one', 1)]))
      await reloads(1)
      assert.deepEqual(outcomes[0], { ok: true })
      await client.post(SECRETS, { metadata: { name: 'after' }, data: { password: PASSWORD } })
      assert.ok(held('after').startsWith('k8s:enc:aesgcm:v1:two:'), 'the new first key writes')
      assert.equal((await client.get(`${SECRETS}/before`)).body.data.password, PASSWORD, 'the old key still reads')

      writeFileSync(path, file([{ aesgcm: { keys: [{ name: 'bad', secret: 'not base64!' }] } }]))
      await reloads(2)
      assert.equal(outcomes[1]?.ok, false)
      assert.ok(logged.some((m) => m.includes('keeping the configuration in effect')))

      writeFileSync(path, file([{ kms: { apiVersion: 'v2', name: 'absent', endpoint: `unix://${join(dir, 'none.sock')}`, timeout: '1s' } }]))
      await reloads(3)
      assert.equal(outcomes[2]?.ok, false, 'a KMS plugin that does not answer is not put in effect')
      await client.post(SECRETS, { metadata: { name: 'still' }, data: { password: PASSWORD } })
      assert.ok(held('still').startsWith('k8s:enc:aesgcm:v1:two:'), 'the configuration in effect stayed')
      assert.equal((await client.get('/healthz/kms-providers')).status, 200)

      // Each attempt is counted in /metrics by outcome, as upstream counts it.
      const metrics = parsePrometheusText((await client.get('/metrics')).text)
      const reloadsOf = (status: string) => sampleValue(metrics, 'apiserver_encryption_config_controller_automatic_reloads_total', { status })
      assert.deepEqual([reloadsOf('success'), reloadsOf('failure')], [1, 2])
      const hash = metrics.get('apiserver_encryption_config_controller_automatic_reloads_total')?.samples[0]?.labels.apiserver_id_hash ?? ''
      assert.match(hash, /^sha256:[0-9a-f]{64}$/)
      assert.ok((sampleValue(metrics, 'apiserver_encryption_config_controller_automatic_reload_last_timestamp_seconds', { status: 'failure' }) ?? 0) > 0)
    } finally {
      stop()
      encryption.close()
    }
  })
})
