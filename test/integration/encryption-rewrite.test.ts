/**
 * POST /encryption/rewrite through createApiServer on the in-memory store:
 * Secrets written under key1, the configuration changed to key2 first, one
 * request rewrites every stale value (the raw store then holds only key2's
 * prefix) with progress lines and the counts, the objects read as before,
 * a client's update landing in the middle of the rewrite is kept, a rerun
 * writes nothing, and only users allowed `post` on the path may run it.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { EncryptionConfiguration, EncryptionProvider } from '../../core/config/encryption.js'
import { EncryptionAtRest } from '../../core/encryption/encryption-at-rest.js'
import { MemoryStorage } from '../../core/storage/memory.js'
import type { ValueTransformer } from '../../core/storage/value/transformer.js'
import { ADMIN_IDENTITY } from '../../core/index.js'
import { cronTab, cronTabDefinition, installDefinition } from './crd-fixtures.js'
import { createTestServer, startServer, TestClient } from './harness.js'

const SECRETS = '/api/v1/namespaces/default/secrets'
const REWRITE = '/encryption/rewrite'
const NAMES = ['s1', 's2', 's3', 's4', 's5']
const b64 = (text: string): string => Buffer.from(text).toString('base64')
const aescbc = (name: string, fill: number): EncryptionProvider => ({ type: 'aescbc', keys: [{ name, secret: new Uint8Array(32).fill(fill) }] })
const secretsWith = (...providers: EncryptionProvider[]): EncryptionConfiguration => ({
  resources: [{ resources: [{ group: '', resource: 'secrets' }], providers }],
})

/**
 * The encryption in effect, with a hook on one key's writes: the test's
 * stand-in for a client whose update lands between the rewrite's read of
 * that object and its write.
 */
class HookedEncryption extends EncryptionAtRest {
  hookedKey = ''
  onWrite: (() => Promise<void>) | undefined

  override forKey(key: string): ValueTransformer {
    const inner = super.forKey(key)
    return {
      fromStorage: (bytes, context) => inner.fromStorage(bytes, context),
      toStorage: async (bytes, context) => {
        const hook = key === this.hookedKey ? this.onWrite : undefined
        if (hook) {
          this.onWrite = undefined
          await hook()
        }
        return inner.toStorage(bytes, context)
      },
    }
  }
}

const tokens = [
  { token: 'bob-token', user: { username: 'bob', groups: ['ops'] } },
  { token: 'rita-token', user: { username: 'rita', groups: ['rotators'] } },
]
const as = (who: 'bob' | 'rita') => ({ connection: {}, headers: { authorization: `Bearer ${who}-token` } })

/** One memory store that successive servers share, each with its own encryption configuration (a restart). */
function cluster() {
  let current: EncryptionAtRest | undefined
  const storage = new MemoryStorage({ transformerFor: (key) => current!.forKey(key) })
  return {
    storage,
    async serve(encryption: EncryptionAtRest): Promise<TestClient> {
      current = encryption
      const server = createTestServer(
        { watchCache: false, authorizationModes: ['RBAC'], bootstrapRbacPolicy: false, authentication: { tokens } },
        { storage, valueTransformers: encryption },
      )
      await server.ready
      return new TestClient(server)
    },
    held: (name: string, prefix = '/registry/secrets/default/'): string => Buffer.from(storage.heldValue(`${prefix}${name}`) as Uint8Array).toString('latin1'),
  }
}

const withoutResourceVersion = (obj: any) => {
  const { resourceVersion: _, ...metadata } = obj.metadata
  return { ...obj, metadata }
}

describe('POST /encryption/rewrite (in-process, memory store)', () => {
  it('rewrites every Secret written under key1 with key2 once key2 is first, keeps a concurrent update, and a rerun writes nothing', async () => {
    const c = cluster()
    const first = await c.serve(new HookedEncryption(secretsWith(aescbc('key1', 1))))
    for (const name of NAMES) assert.equal((await first.post(SECRETS, { metadata: { name }, data: { password: b64(`pw-${name}`) } })).status, 201)
    assert.equal((await first.post('/api/v1/namespaces/default/configmaps', { metadata: { name: 'plain' }, data: { a: 'b' } })).status, 201)
    for (const name of NAMES) assert.match(c.held(name), /^k8s:enc:aescbc:v1:key1:/)
    const before = new Map<string, any>()
    for (const name of NAMES) before.set(name, (await first.get(`${SECRETS}/${name}`)).body)

    const rotated = new HookedEncryption(secretsWith(aescbc('key2', 2), aescbc('key1', 1)))
    const client = await c.serve(rotated)
    // The rewrite's write of s1 is overtaken by a client's update of that Secret.
    let concurrent: { status: number } | undefined
    rotated.hookedKey = '/registry/secrets/default/s1'
    rotated.onWrite = async () => {
      const fresh = (await client.get(`${SECRETS}/s1`)).body
      concurrent = await client.put(`${SECRETS}/s1`, { ...fresh, data: { password: b64('changed-meanwhile') } })
    }
    const run = await client.post(REWRITE, '')
    assert.equal(run.status, 200, run.text)
    assert.match(run.headers.get('content-type') ?? '', /^text\/plain/)
    assert.equal(concurrent?.status, 200, 'the client update went through during the rewrite')
    const lines = run.text.trim().split('\n')
    assert.deepEqual(lines, ['secrets: 5 checked, 4 rewritten, 1 already current, 0 failed', 'done: 5 checked, 4 rewritten, 1 already current, 0 failed'])

    for (const name of NAMES) assert.match(c.held(name), /^k8s:enc:aescbc:v1:key2:/, `${name} now under key2`)
    assert.equal((await client.get(`${SECRETS}/s1`)).body.data.password, b64('changed-meanwhile'), 'the concurrent update is not lost')
    for (const name of NAMES.slice(1)) {
      const after = (await client.get(`${SECRETS}/${name}`)).body
      assert.deepEqual(withoutResourceVersion(after), withoutResourceVersion(before.get(name)), `${name} unchanged`)
      assert.notEqual(after.metadata.resourceVersion, before.get(name).metadata.resourceVersion, `${name} written again`)
    }
    // Resources the configuration does not name are not looked at.
    assert.ok(!run.text.includes('configmaps'))

    // Resumable: a rerun (after an interruption, or to be sure) passes over what is current without writing it.
    const stored = NAMES.map((n) => c.held(n))
    const again = await client.post(`${REWRITE}?resources=secrets`, '')
    assert.equal(again.status, 200, again.text)
    assert.match(again.text, /\ndone: 5 checked, 0 rewritten, 5 already current, 0 failed\n$/)
    assert.deepEqual(NAMES.map((n) => c.held(n)), stored, 'nothing written again')
  })

  it('refuses users not allowed post on /encryption/rewrite with 403 and rewrites nothing; an RBAC rule on the path lets one in', async () => {
    const c = cluster()
    const first = await c.serve(new EncryptionAtRest(secretsWith(aescbc('key1', 1))))
    assert.equal((await first.post(SECRETS, { metadata: { name: 'kept' }, data: { password: b64('pw') } })).status, 201)
    const client = await c.serve(new EncryptionAtRest(secretsWith(aescbc('key2', 2), aescbc('key1', 1))))

    const refused = await client.post(REWRITE, '', as('bob'))
    assert.equal(refused.status, 403)
    assert.equal(refused.body.reason, 'Forbidden')
    assert.equal(refused.body.message, 'forbidden: User "bob" cannot post path "/encryption/rewrite"')
    assert.match(c.held('kept'), /^k8s:enc:aescbc:v1:key1:/, 'nothing rewritten')

    const role = { metadata: { name: 'encryption-rewriter' }, rules: [{ nonResourceURLs: [REWRITE], verbs: ['post'] }] }
    assert.equal((await client.post('/apis/rbac.authorization.k8s.io/v1/clusterroles', role)).status, 201)
    const binding = {
      metadata: { name: 'rotators' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'encryption-rewriter' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'rotators' }],
    }
    assert.equal((await client.post('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', binding)).status, 201)
    assert.equal((await client.post(REWRITE, '', as('bob'))).status, 403, 'bob still refused')
    let allowed = await client.post(REWRITE, '', as('rita'))
    // The authorizer follows the new binding through its watch: no timing asserted, only that it arrives.
    for (let i = 0; i < 100 && allowed.status === 403; i++) {
      await new Promise((r) => setTimeout(r, 20))
      allowed = await client.post(REWRITE, '', as('rita'))
    }
    assert.equal(allowed.status, 200, allowed.text)
    assert.match(allowed.text, /done: 1 checked, 1 rewritten, 0 already current, 0 failed/)
    assert.match(c.held('kept'), /^k8s:enc:aescbc:v1:key2:/)
    assert.ok(ADMIN_IDENTITY.groups?.includes('system:masters'))
  })

  it('answers 400 naming the resources it can rewrite for a resource the configuration does not cover', async () => {
    const c = cluster()
    const client = await c.serve(new EncryptionAtRest(secretsWith(aescbc('key1', 1))))
    const r = await client.post(`${REWRITE}?resources=configmaps`, '')
    assert.equal(r.status, 400)
    assert.equal(r.body.reason, 'BadRequest')
    assert.match(r.body.message, /\(secrets\); not: configmaps$/)
  })

  it('covers custom resources under a group wildcard: a CronTab written under key1 is rewritten with key2', async () => {
    const c = cluster()
    const groupWith = (...providers: EncryptionProvider[]): EncryptionConfiguration => ({
      resources: [{ resources: [{ group: 'stable.example.com', resource: '*' }], providers }],
    })
    const first = await c.serve(new EncryptionAtRest(groupWith(aescbc('key1', 1))))
    await installDefinition(first, cronTabDefinition())
    const CRONTABS = '/apis/stable.example.com/v1/namespaces/default/crontabs'
    assert.equal((await first.post(CRONTABS, cronTab('nightly'))).status, 201)
    const stored = '/registry/stable.example.com/crontabs/default/'
    assert.match(c.held('nightly', stored), /^k8s:enc:aescbc:v1:key1:/)

    const client = await c.serve(new EncryptionAtRest(groupWith(aescbc('key2', 2), aescbc('key1', 1))))
    const run = await client.post(`${REWRITE}?resources=crontabs.stable.example.com`, '')
    assert.equal(run.status, 200, run.text)
    assert.match(run.text, /^crontabs\.stable\.example\.com: 1 checked, 1 rewritten, 0 already current, 0 failed\n/)
    assert.match(c.held('nightly', stored), /^k8s:enc:aescbc:v1:key2:/)
    assert.equal((await client.get(`${CRONTABS}/nightly`)).body.spec.cronSpec, '* * * * */5')
  })

  it('is not served without an encryption configuration', async () => {
    const client = await startServer()
    assert.equal((await client.post(REWRITE, '')).status, 404)
  })
})
