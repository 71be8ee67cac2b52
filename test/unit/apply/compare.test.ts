/**
 * The comparison behind every write's field ownership (upstream's Compare):
 * what was added, modified and removed between two objects, per owned field.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { compareObjects, compareObjectsInSteps, DEDUCED, shapeOfType } from '../../../core/apply/typed.js'
import { runAtOnce } from '../../../core/machinery/time-slice.js'
import { formatPath } from '../../../core/apply/path.js'
import type { FieldSet } from '../../../core/apply/fieldset.js'
import { builtinEntries } from '../../../core/resources/builtin.js'
import { Catalogue } from '../../../core/resources/catalogue.js'
import { SAMPLES, apiVersionOf } from '../../integration/catalogue-samples.js'
import { runCounting } from '../../fixtures/checkpoints.js'

const DEPLOYMENT = shapeOfType('io.k8s.api.apps.v1.Deployment')
const paths = (set: FieldSet): string[] => set.paths().map(formatPath).sort()

const before = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', labels: { app: 'web', tier: 'front' } },
  spec: {
    replicas: 2,
    template: { spec: { containers: [{ name: 'nginx', image: 'nginx:1.27', env: [{ name: 'A', value: '1' }] }] } },
  },
}
const after = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', labels: { app: 'web' } },
  spec: {
    replicas: 3,
    template: {
      spec: {
        containers: [
          { name: 'nginx', image: 'nginx:1.28', env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }] },
          { name: 'sidecar', image: 'busybox' },
        ],
      },
    },
  },
}

describe('comparing two objects field by field', () => {
  it('names what was added, modified and removed, list items by their keys', () => {
    const c = compareObjects(before, after, DEPLOYMENT)
    assert.deepEqual(paths(c.modified), ['.spec.replicas', '.spec.template.spec.containers[name="nginx"].image'])
    assert.deepEqual(paths(c.removed), ['.metadata.labels.tier'])
    assert.deepEqual(paths(c.added), [
      '.spec.template.spec.containers[name="nginx"].env[name="B"]',
      '.spec.template.spec.containers[name="nginx"].env[name="B"].name',
      '.spec.template.spec.containers[name="nginx"].env[name="B"].value',
      '.spec.template.spec.containers[name="sidecar"]',
      '.spec.template.spec.containers[name="sidecar"].image',
      '.spec.template.spec.containers[name="sidecar"].name',
    ])
  })

  it('gives a created object whole as added, the containers on the way included', () => {
    const c = compareObjects(undefined, before, DEPLOYMENT)
    assert.ok(paths(c.added).includes('.spec.template.spec.containers[name="nginx"]'))
    assert.ok(paths(c.added).includes('.metadata.labels.tier'))
    assert.ok(c.modified.isEmpty() && c.removed.isEmpty())
  })

  it('owns an item whose key is given twice as a whole', () => {
    const twice = { spec: { template: { spec: { containers: [{ name: 'a', image: 'x' }, { name: 'a', image: 'y' }] } } } }
    const once = { spec: { template: { spec: { containers: [{ name: 'a', image: 'x' }] } } } }
    const item = '.spec.template.spec.containers[name="a"]'
    const doubled = compareObjects(once, twice, DEPLOYMENT)
    assert.deepEqual(paths(doubled.added), [item])
    // The single item's fields are no longer owned one by one.
    assert.deepEqual(paths(doubled.removed), [item, `${item}.image`, `${item}.name`])
    const single = compareObjects(twice, once, DEPLOYMENT)
    assert.deepEqual(paths(single.removed), [item])
    assert.deepEqual(paths(single.added), [item, `${item}.image`, `${item}.name`])
  })

  it('is symmetric, and finds nothing between an object and itself, for every kind and generated changes', () => {
    const catalogue = new Catalogue(builtinEntries(async () => ({ allowed: false })))
    let seed = 7
    const next = (): number => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff)
    for (const sample of SAMPLES) {
      const [group = '', version = '', resource = ''] = sample.gvr.split('/')
      const entry = catalogue.lookup(group, version, resource)
      assert.ok(entry, sample.gvr)
      const body = { apiVersion: apiVersionOf(sample.gvr), kind: entry.kind, ...sample.body }
      for (const shape of [shapeOfType(entry.typeName), DEDUCED]) {
        for (let i = 0; i < 10; i++) {
          const a = changed(body, next, 0)
          const b = changed(a, next, 0)
          const forth = compareObjects(a, b, shape)
          const back = compareObjects(b, a, shape)
          const inSteps = runAtOnce(compareObjectsInSteps(a, b, shape))
          for (const set of ['added', 'modified', 'removed'] as const) {
            assert.deepEqual(paths(inSteps[set]), paths(forth[set]), `${sample.gvr}: ${set}, compared in steps`)
          }
          assert.ok(forth.added.equals(back.removed), `${sample.gvr}: added one way, removed the other`)
          assert.ok(forth.modified.equals(back.modified), `${sample.gvr}: modified both ways`)
          const same = compareObjects(a, structuredClone(a), shape)
          assert.ok(same.added.isEmpty() && same.modified.isEmpty() && same.removed.isEmpty(), `${sample.gvr}: an object against itself`)
        }
      }
    }
  })
})

describe('comparing in steps, for objects of megabytes', () => {
  it('finds what the comparison at once finds, over a level of many keys and a list of many items, with checkpoints between', () => {
    const CONFIGMAP = shapeOfType('io.k8s.api.core.v1.ConfigMap')
    const data = (n: number, from = 0): Record<string, string> => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${from + i}`, 'v']))
    const a = { metadata: { name: 'c' }, data: data(10_000) }
    const b = { metadata: { name: 'c', labels: { x: 'y' } }, data: { ...data(10_000, 5_000), k0: 'changed' } }
    const { value: inSteps, checkpoints } = runCounting(compareObjectsInSteps(a, b, CONFIGMAP))
    const atOnce = compareObjects(a, b, CONFIGMAP)
    for (const set of ['added', 'modified', 'removed'] as const) assert.deepEqual(paths(inSteps[set]), paths(atOnce[set]), set)
    // k1 to k4999 gone (k0 changed), under `data`.
    assert.equal(inSteps.removed.size, 1 + 4_999)
    assert.deepEqual(paths(inSteps.modified), ['.data.k0'])
    // 20,000 keys met on either side: a checkpoint every 2,048 at most.
    assert.ok(checkpoints >= 9, `${checkpoints} checkpoints`)
    const env = Array.from({ length: 5_000 }, (_, i) => ({ name: `E${i}`, value: String(i) }))
    const pod = (list: unknown[]) => ({ spec: { containers: [{ name: 'c', image: 'i', env: list }] } })
    const POD = shapeOfType('io.k8s.api.core.v1.Pod')
    const listed = runAtOnce(compareObjectsInSteps(pod(env), pod(env.slice(1)), POD))
    assert.deepEqual(paths(listed.removed), paths(compareObjects(pod(env), pod(env.slice(1)), POD).removed))
    assert.ok(paths(listed.removed).includes('.spec.containers[name="c"].env[name="E0"].value'))
  })
})

/** `v` with some values changed, dropped, nulled, emptied, added, and list items duplicated or dropped. */
function changed(v: unknown, next: () => number, depth: number): unknown {
  if (depth > 6) return v
  if (Array.isArray(v)) {
    const out = v.map((x) => (next() < 0.3 ? changed(x, next, depth + 1) : x))
    if (next() < 0.2 && out.length) out.push(structuredClone(out[0]))
    if (next() < 0.2 && out.length) out.splice(0, 1)
    return out
  }
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, x] of Object.entries(v)) {
      const r = next()
      if (r < 0.1) continue
      out[k] = r < 0.15 ? null : r < 0.2 ? {} : r < 0.25 ? 7 : next() < 0.5 ? changed(x, next, depth + 1) : x
    }
    if (next() < 0.2) out[`extra${Math.floor(next() * 3)}`] = next() < 0.5 ? { a: 1, b: [1, 2] } : 'v'
    return out
  }
  if (typeof v === 'string') return next() < 0.5 ? `${v}x` : v
  if (typeof v === 'number') return next() < 0.5 ? v + 1 : v
  return v
}
