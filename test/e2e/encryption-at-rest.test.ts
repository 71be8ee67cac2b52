/**
 * Encryption at rest with the real daemon: on a real etcd, the bytes under
 * a Secret's key (read with an etcd client, not through the server) carry
 * upstream's prefix, hold no plaintext and open with AES-GCM from the
 * format alone; rotation with `kubectl replace`, a removed key (500 naming
 * the key), identity first, and configurations refused at start-up. On the
 * embedded store, its files never hold a Secret's plaintext.
 */
import assert from 'node:assert/strict'
import { createDecipheriv } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { EtcdServer } from '../storage-contract/etcd-server.js'
import { Daemon } from './daemon.js'

const PASSWORD = 'correct-horse-battery-staple'
const KEY1 = Buffer.alloc(32, 1)
const KEY2 = Buffer.alloc(32, 2)
const files = mkdtempSync(join(tmpdir(), 'encryption-e2e-'))
after(() => rmSync(files, { recursive: true, force: true }))

let configs = 0
/** An EncryptionConfiguration file with one entry per [resources, providers] pair. */
function config(...entries: [string[], object[]][]): string {
  const path = join(files, `encryption-${++configs}.json`)
  const resources = entries.map(([names, providers]) => ({ resources: names, providers }))
  writeFileSync(path, JSON.stringify({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'EncryptionConfiguration', resources }))
  return path
}
const aesgcm = (name: string, key: Buffer) => ({ aesgcm: { keys: [{ name, secret: key.toString('base64') }] } })

describe('encryption at rest on etcd (daemon)', () => {
  let etcd: EtcdServer
  const daemons: Daemon[] = []
  before(async () => {
    etcd = await EtcdServer.start()
  })
  after(async () => {
    for (const d of daemons) await d.stop()
    await etcd.destroy()
  })

  async function daemon(configPath: string): Promise<Daemon> {
    const d = await Daemon.start([`--etcd-servers=${etcd.clientUrl}`, `--encryption-provider-config=${configPath}`])
    daemons.push(d)
    return d
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

  it('stores a Secret as aesgcm ciphertext under upstream prefix, bound to its key, that AES-GCM opens from the format', async () => {
    const d = await daemon(config([['secrets'], [aesgcm('key1', KEY1), { identity: {} }]]))
    await d.ok('create', 'secret', 'generic', 'db', `--from-literal=password=${PASSWORD}`)
    const key = '/registry/secrets/default/db'
    const stored = await raw(key)
    const prefix = 'k8s:enc:aesgcm:v1:key1:'
    assert.equal(stored.subarray(0, prefix.length).toString(), prefix)
    assert.ok(!stored.includes(PASSWORD) && !stored.includes(Buffer.from(PASSWORD).toString('base64')))
    const body = stored.subarray(prefix.length)
    const decipher = createDecipheriv('aes-256-gcm', KEY1, body.subarray(0, 12))
    decipher.setAAD(Buffer.from(key))
    decipher.setAuthTag(body.subarray(body.length - 16))
    const plain = Buffer.concat([decipher.update(body.subarray(12, body.length - 16)), decipher.final()])
    // The codec's bytes: upstream's protobuf envelope by default.
    assert.equal(plain.subarray(0, 4).toString('latin1'), 'k8s\0')
    assert.ok(plain.includes(PASSWORD))
    assert.equal(await d.ok('get', 'secret', 'db', '-o', 'jsonpath={.data.password}'), Buffer.from(PASSWORD).toString('base64'))
    await d.ok('create', 'configmap', 'open', '--from-literal=a=b')
    assert.ok((await raw('/registry/configmaps/default/open')).subarray(0, 4).toString('latin1') === 'k8s\0', 'other resources as before')
  })

  it('rotates: with a new first key, kubectl replace rewrites every Secret with it; the old key still reads', async () => {
    const d = await daemon(config([['secrets'], [aesgcm('key2', KEY2), aesgcm('key1', KEY1)]]))
    assert.equal(await d.ok('get', 'secret', 'db', '-o', 'jsonpath={.data.password}'), Buffer.from(PASSWORD).toString('base64'))
    const all = await d.ok('get', 'secrets', '-A', '-o', 'json')
    await d.ok('replace', '-f', d.manifest('all.json', all))
    assert.equal((await raw('/registry/secrets/default/db')).subarray(0, 23).toString(), 'k8s:enc:aesgcm:v1:key2:')
  })

  it('answers 500 naming the key when the key of a value was removed, and keeps serving the rest', async () => {
    const d = await daemon(config([['secrets'], [aesgcm('key3', Buffer.alloc(32, 3))]]))
    const r = await d.kubectl('get', 'secret', 'db', '-o', 'json')
    assert.notEqual(r.code, 0)
    assert.match(r.stderr, /Internal error occurred: unable to transform key "\/registry\/secrets\/default\/db": no matching key was found for the provided AES transformer/)
    assert.ok(!r.stderr.includes(PASSWORD))
    await d.ok('create', 'secret', 'generic', 'fresh', '--from-literal=x=y')
    assert.equal(await d.ok('get', 'secret', 'fresh', '-o', 'jsonpath={.data.x}'), Buffer.from('y').toString('base64'))
    assert.equal(await d.ok('get', 'configmap', 'open', '-o', 'jsonpath={.data.a}'), 'b')
  })

  // identity last under *.*: the objects stored in the clear so far stay readable, as upstream requires.
  it('leaves Secrets in the clear when their entry starts with identity, although *.* encrypts', async () => {
    const d = await daemon(config([['secrets'], [{ identity: {} }, aesgcm('key1', KEY1)]], [['*.*'], [aesgcm('all', KEY2), { identity: {} }]]))
    await d.ok('create', 'secret', 'generic', 'clear', `--from-literal=password=${PASSWORD}`)
    assert.ok((await raw('/registry/secrets/default/clear')).includes(PASSWORD))
    await d.ok('create', 'configmap', 'wild', '--from-literal=a=b')
    assert.equal((await raw('/registry/configmaps/default/wild')).subarray(0, 22).toString(), 'k8s:enc:aesgcm:v1:all:')
    assert.equal(await d.ok('get', 'configmap', 'wild', '-o', 'jsonpath={.data.a}'), 'b')
  })

  it('refuses at start-up overlapping wildcards, and a KMS v1 plugin while the KMSv1 gate is off, each with its reason', async () => {
    await assert.rejects(daemon(config([['*.*'], [aesgcm('k', KEY1)]], [['secrets'], [aesgcm('k', KEY1)]])), /resource "secrets" is masked by earlier rule "\*\.\*"/)
    const kms = config([['secrets'], [{ kms: { apiVersion: 'v1', name: 'legacy', endpoint: 'unix:///tmp/none.sock' } }]])
    await assert.rejects(daemon(kms), /KMSv1 is deprecated and will only receive security updates going forward/)
  })
})

describe('encryption at rest on the embedded store (daemon)', () => {
  it('keeps no plaintext of a Secret in the store files, and reads it back', async () => {
    const path = config([['secrets'], [{ secretbox: { keys: [{ name: 'sb', secret: KEY1.toString('base64') }] } }]])
    const d = await Daemon.start([`--encryption-provider-config=${path}`])
    try {
      await d.ok('create', 'secret', 'generic', 'local', `--from-literal=password=${PASSWORD}`)
      assert.equal(await d.ok('get', 'secret', 'local', '-o', 'jsonpath={.data.password}'), Buffer.from(PASSWORD).toString('base64'))
      const bytes = Buffer.concat(readdirSync(d.dataDir).map((f) => readFileSync(join(d.dataDir, f))))
      assert.ok(bytes.includes('k8s:enc:secretbox:v1:sb:'))
      assert.ok(!bytes.includes(PASSWORD) && !bytes.includes(Buffer.from(PASSWORD).toString('base64')))
    } finally {
      await d.stop()
    }
  })
})
