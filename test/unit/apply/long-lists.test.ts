/**
 * Field ownership of long lists. Every write compares the old object with
 * the new one and an apply merges them, list items matched by their key
 * (list-map) or value (set). Matched pairwise, a Pod of 20,000 env entries
 * took some 48 s to create and 196 s to apply to, the server stalled all
 * along; matched by identity (elementId) both take about a second.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { applyObject, updateManagedFields, type ManagedFieldsEntry } from '../../../core/apply/index.js'
import { elementId, elementsEqual, type PathElement } from '../../../core/apply/path.js'

const POD = 'io.k8s.api.core.v1.Pod'
const NOW = new Date('2024-05-01T10:00:00Z')
const opts = { now: NOW, apiVersion: 'v1', typeName: POD }

/**
 * A guard against a hang, not a measure: the linear code takes under a
 * second here, the pairwise comparisons it replaced tens of seconds.
 */
const HANG_GUARD = { timeout: 60_000 }

type Obj = Record<string, any>

const envOf = (n: number, value: string) => Array.from({ length: n }, (_, i) => ({ name: `E${i}`, value }))

const fieldsOf = (entry: ManagedFieldsEntry | undefined): Obj => entry?.fieldsV1 as Obj
const items = (fields: Obj, prefix: string): number => Object.keys(fields).filter((k) => k.startsWith(prefix)).length

describe('field ownership of long lists', HANG_GUARD, () => {
  it('tracks a created Pod of 20,000 env entries and 20,000 finalizers', () => {
    const n = 20_000
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'default', finalizers: envOf(n, '').map((e) => `x/${e.name}`) },
      spec: { containers: [{ name: 'c', image: 'i', env: envOf(n, 'v') }] },
    }
    const [entry] = updateManagedFields(undefined, pod, 'creator', opts)
    const fields = fieldsOf(entry)
    const env = fields['f:spec']['f:containers']['k:{"name":"c"}']['f:env']
    assert.equal(items(env, 'k:'), n)
    assert.deepEqual(env['k:{"name":"E19999"}'], { '.': {}, 'f:name': {}, 'f:value': {} })
    assert.equal(items(fields['f:metadata']['f:finalizers'], 'v:'), n)
    assert.ok('v:"x/E0"' in fields['f:metadata']['f:finalizers'])
  })

  it('applies to a Pod of 10,000 env entries, merging them by name in their order', () => {
    const n = 10_000
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'i', env: envOf(n, 'v') }] } }
    const live = { ...pod, metadata: { ...pod.metadata, managedFields: updateManagedFields(undefined, pod, 'creator', opts) } }
    // every other entry changed, listed backwards, and one added
    const env = [...envOf(n, 'w').filter((_, i) => i % 2 === 0).reverse(), { name: 'NEW', value: 'n' }]
    const applied = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', env }] } }
    const { object, managedFields } = applyObject(live, applied, 'applier', { ...opts, force: true })
    const merged = (object as Obj).spec.containers[0].env as { name: string; value: string }[]
    assert.equal(merged.length, n + 1)
    // the entries only live keep their places; the applied ones follow the configuration's order from the first
    assert.deepEqual(merged[0], { name: 'E1', value: 'v' })
    assert.deepEqual(merged.slice(n / 2 - 2, n / 2 + 2), [
      { name: 'E9997', value: 'v' },
      { name: 'E9998', value: 'w' },
      { name: 'E9999', value: 'v' },
      { name: 'E9996', value: 'w' },
    ])
    assert.deepEqual(merged.slice(-2), [{ name: 'E0', value: 'w' }, { name: 'NEW', value: 'n' }])
    const mine = fieldsOf(managedFields.find((e) => e.manager === 'applier'))['f:spec']['f:containers']['k:{"name":"c"}']['f:env']
    assert.equal(items(mine, 'k:'), n / 2 + 1)
  })
})

describe('lists longer than a call takes arguments', HANG_GUARD, () => {
  it('tracks and applies a set of 150,000 finalizers without overflowing the stack', () => {
    const finalizers = Array.from({ length: 150_000 }, (_, i) => `x/f${i}`)
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default', finalizers }, spec: { containers: [{ name: 'c', image: 'i' }] } }
    const [entry] = updateManagedFields(undefined, pod, 'creator', opts)
    assert.equal(items(fieldsOf(entry)['f:metadata']['f:finalizers'], 'v:'), finalizers.length)
    const applied = applyObject(undefined, pod, 'applier', { ...opts, force: false })
    assert.equal((applied.object as Obj).metadata.finalizers.length, finalizers.length)
  })
})

describe('the identity of a list item', () => {
  const elements: PathElement[] = [
    { key: [['name', 'a']] },
    { key: [['name', 'b']] },
    { key: [['containerPort', 80], ['protocol', 'TCP']] },
    { key: [['containerPort', 80], ['protocol', 'UDP']] },
    { key: [['containerPort', '80'], ['protocol', 'TCP']] },
    { key: [['a', { x: 1, y: [1, 'a'] }]] },
    { key: [['a', { y: [1, 'a'], x: 1 }]] },
    { key: [['a', { x: 1 }]] },
    { key: [['a', null]] },
    { key: [['a', 'null']] },
    { key: [['a', true]] },
    { key: [['a', 'true']] },
    { key: [['a', 0]] },
    { key: [['a', -0]] },
    { key: [['a,b', 1]] },
    { key: [['a', 'b'], ['b', 1]] },
    { value: 'x/a' },
    { value: '"x/a"' },
    { value: 1 },
    { value: 1.5 },
    { value: '1' },
    { field: 'a' },
    { index: 0 },
  ]

  it('is the same text exactly for the elements elementsEqual finds equal', () => {
    for (const a of elements) {
      for (const b of elements) {
        assert.equal(elementId(a) === elementId(b), elementsEqual(a, b), `${JSON.stringify(a)} against ${JSON.stringify(b)}`)
      }
    }
  })
})
