/**
 * The rewrite of stale values, on a memory store: page by page with a
 * progress line each, only stale values written, namespaced and
 * cluster-scoped keys alike; a value no provider reads is reported and left
 * as it is while the objects around it are rewritten; which resources a
 * configuration covers.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { EncryptionConfiguration, EncryptionProvider } from '../../../core/config/encryption.js'
import { EncryptionAtRest } from '../../../core/encryption/encryption-at-rest.js'
import { rewriteStaleValues, type RewriteCounts } from '../../../core/encryption/rewrite.js'
import { MemoryStorage } from '../../../core/storage/memory.js'

const aesgcm = (name: string, fill: number): EncryptionProvider => ({ type: 'aesgcm', keys: [{ name, secret: new Uint8Array(32).fill(fill) }] })
const everything = (...providers: EncryptionProvider[]): EncryptionConfiguration => ({
  resources: [{ resources: [{ group: '*', resource: '*' }], providers }],
})
const secret = (namespace: string, name: string) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { namespace, name }, data: { x: 'eQ==' } })
const node = (name: string) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name } })

async function drain(lines: AsyncGenerator<string, RewriteCounts>): Promise<{ lines: string[]; counts: RewriteCounts }> {
  const out: string[] = []
  for (;;) {
    const next = await lines.next()
    if (next.done) return { lines: out, counts: next.value }
    out.push(next.value)
  }
}

function store(config: EncryptionConfiguration) {
  let current = new EncryptionAtRest(config)
  const storage = new MemoryStorage({ transformerFor: (key) => current.forKey(key) })
  const resources = [
    { group: '', resource: 'secrets', prefix: '/registry/secrets/' },
    { group: '', resource: 'nodes', prefix: '/registry/minions/' },
  ]
  const use = (next: EncryptionAtRest) => {
    current = next
    for (const r of resources) current.register(r)
  }
  use(current)
  const held = (key: string) => Buffer.from(storage.heldValue(key) as Uint8Array).toString('latin1')
  return { storage, use, held, targets: resources.map((r) => ({ ...r, storage })) }
}

describe('rewriteStaleValues', () => {
  it('rewrites stale values page by page, a progress line per page, and passes over current ones', async () => {
    const s = store(everything(aesgcm('old', 1)))
    for (const [ns, name] of [['a', 's1'], ['a', 's2'], ['b', 's3'], ['b', 's4'], ['c', 's5']] as const) {
      await s.storage.create(`/registry/secrets/${ns}/${name}`, secret(ns, name))
    }
    await s.storage.create('/registry/minions/n1', node('n1'))
    s.use(new EncryptionAtRest(everything(aesgcm('new', 2), aesgcm('old', 1))))
    // One Secret is already written with the new key by a client before the rewrite.
    await s.storage.guaranteedUpdate('/registry/secrets/a/s2', (o) => ({ ...o, data: { x: 'eg==' } }))

    const { lines, counts } = await drain(rewriteStaleValues(s.targets, { pageSize: 2 }))
    assert.deepEqual(lines, [
      'secrets: 2 checked, 1 rewritten, 1 already current, 0 failed so far',
      'secrets: 4 checked, 3 rewritten, 1 already current, 0 failed so far',
      'secrets: 5 checked, 4 rewritten, 1 already current, 0 failed',
      'nodes: 1 checked, 1 rewritten, 0 already current, 0 failed',
      'done: 6 checked, 5 rewritten, 1 already current, 0 failed',
    ])
    assert.deepEqual(counts, { checked: 6, rewritten: 5, current: 1, failed: 0 })
    assert.match(s.held('/registry/minions/n1'), /^k8s:enc:aesgcm:v1:new:/)
    for (const key of ['a/s1', 'a/s2', 'b/s3', 'b/s4', 'c/s5']) assert.match(s.held(`/registry/secrets/${key}`), /^k8s:enc:aesgcm:v1:new:/)
  })

  it('reports a value of a removed key, leaves it as it is, and rewrites the objects around it', async () => {
    const s = store(everything(aesgcm('old', 1)))
    for (const name of ['a1', 'a2']) await s.storage.create(`/registry/secrets/a/${name}`, secret('a', name))
    s.use(new EncryptionAtRest(everything(aesgcm('gone', 3))))
    await s.storage.create('/registry/secrets/a/lost', secret('a', 'lost'))
    s.use(new EncryptionAtRest(everything(aesgcm('old', 1))))
    for (const name of ['z1', 'z2']) await s.storage.create(`/registry/secrets/a/${name}`, secret('a', name))
    await s.storage.create('/registry/minions/n1', node('n1'))
    const lost = s.held('/registry/secrets/a/lost')
    s.use(new EncryptionAtRest(everything(aesgcm('new', 2), aesgcm('old', 1))))

    const { lines, counts } = await drain(rewriteStaleValues(s.targets, { pageSize: 10 }))
    assert.equal(lines.length, 4, lines.join('\n'))
    assert.match(lines[0]!, /^secrets: failed \/registry\/secrets\/a\/lost: .*unable to transform key "\/registry\/secrets\/a\/lost"/)
    assert.deepEqual(lines.slice(1), [
      'secrets: 5 checked, 4 rewritten, 0 already current, 1 failed',
      'nodes: 1 checked, 1 rewritten, 0 already current, 0 failed',
      'done: 6 checked, 5 rewritten, 0 already current, 1 failed; the failed objects are unchanged, run again once their providers are back',
    ])
    assert.equal(counts.failed, 1)
    assert.equal(s.held('/registry/secrets/a/lost'), lost)
    for (const key of ['a/a1', 'a/a2', 'a/z1', 'a/z2']) assert.match(s.held(`/registry/secrets/${key}`), /^k8s:enc:aesgcm:v1:new:/, key)
  })

  it('stops between two objects when its reader stops', async () => {
    const s = store(everything(aesgcm('old', 1)))
    for (const name of ['s1', 's2', 's3']) await s.storage.create(`/registry/secrets/a/${name}`, secret('a', name))
    s.use(new EncryptionAtRest(everything(aesgcm('new', 2), aesgcm('old', 1))))
    const lines = rewriteStaleValues(s.targets, { pageSize: 1 })
    assert.equal((await lines.next()).value, 'secrets: 1 checked, 1 rewritten, 0 already current, 0 failed so far')
    await lines.return({ checked: 0, rewritten: 0, current: 0, failed: 0 })
    assert.match(s.held('/registry/secrets/a/s1'), /:new:/)
    assert.match(s.held('/registry/secrets/a/s3'), /:old:/, 'not reached')
  })
})

describe('EncryptionAtRest.covers', () => {
  it('covers the resources an entry names, identity-first ones too, and everything under *.*', () => {
    const named = new EncryptionAtRest({
      resources: [
        { resources: [{ group: '', resource: 'secrets' }], providers: [{ type: 'identity' }, aesgcm('k', 1)] },
        { resources: [{ group: 'apps', resource: '*' }], providers: [aesgcm('k', 1)] },
      ],
    })
    assert.equal(named.covers({ group: '', resource: 'secrets' }), true)
    assert.equal(named.covers({ group: 'apps', resource: 'deployments' }), true)
    assert.equal(named.covers({ group: '', resource: 'configmaps' }), false)
    assert.equal(new EncryptionAtRest(everything(aesgcm('k', 1))).covers({ group: 'example.com', resource: 'widgets' }), true)
  })
})
