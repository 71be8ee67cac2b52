/**
 * The copies a write keeps (canonical.ts) are built along the object's shape
 * instead of written as Go's JSON and parsed again: they must be exactly what
 * parsing that text gives, key order included, for every kind and for the
 * odd values a client or an embedder may hand over.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { asGoEncodes, asGoEncodesInSteps, canonicalCopy, canonicalCopyInSteps, goEncodedCopy } from '../../../core/encoding/canonical.js'
import { runAtOnce } from '../../../core/machinery/time-slice.js'
import { runCounting } from '../../fixtures/checkpoints.js'
import { marshalGoUnescaped, marshalInGoOrder, type Shape } from '../../../core/encoding/go-json.js'
import { shapeOfObject } from '../../../core/encoding/json-shapes.js'
import { SAMPLES, apiVersionOf } from '../../integration/catalogue-samples.js'
import { Catalogue } from '../../../core/resources/catalogue.js'
import { builtinEntries } from '../../../core/resources/builtin.js'

const catalogue = new Catalogue(builtinEntries(async () => ({ allowed: false })))

function kindOfResource(gvr: string): string {
  const [group = '', version = '', resource = ''] = gvr.split('/')
  const entry = catalogue.lookup(group, version, resource)
  assert.ok(entry, `no catalogue entry for ${gvr}`)
  return entry.kind
}

/** What the copies stand for: the text written along the shape, parsed. */
const byText = (v: Record<string, unknown>, asGo: boolean): unknown =>
  JSON.parse((asGo ? marshalGoUnescaped : marshalInGoOrder)(v, shapeOfObject(v), shapeOfObject))

/** Equal values (-0 and 0 told apart, undefined and absent too) with every object's keys in the same order. */
function assertSameCopy(actual: unknown, expected: unknown, what: string): void {
  assert.deepStrictEqual(actual, expected, what)
  assert.equal(JSON.stringify(actual), JSON.stringify(expected), `${what}: key order`)
}

/** The copies made at once and in steps (for objects of megabytes) alike. */
function assertBothCopies(v: Record<string, unknown>, what: string): void {
  const asGo = byText(v, true)
  const reordered = byText(v, false)
  assertSameCopy(goEncodedCopy(v), asGo, `${what} (as Go encodes it)`)
  assertSameCopy(canonicalCopy(v), reordered, `${what} (reordered)`)
  assertSameCopy(runAtOnce(asGoEncodesInSteps(v)), asGoEncodes(v), `${what} (as Go encodes it, in steps)`)
  assertSameCopy(runAtOnce(canonicalCopyInSteps(v)), reordered, `${what} (reordered, in steps)`)
}

/** A small seeded generator, so that a failure names a case that can be run again. */
function random(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const ODD_SCALARS: readonly unknown[] = ['', 'x', '<&>', '\u2028', '\ud800', 0, -0, 1.5, 1e21, Number.NaN, Number.POSITIVE_INFINITY, true, false, null, undefined]
const ODD_KEYS = ['10', '9', '0', '__proto__', '\u{1F600}', '\uFFFD', 'b', 'a', 'unknownField']

function shuffled<T>(items: T[], next: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1))
    ;[items[i], items[j]] = [items[j]!, items[i]!]
  }
  return items
}

/** A value along `shape`: some of its fields in any order, empty and unset ones, fields and values it does not expect. */
function generate(shape: Shape, next: () => number, depth: number): unknown {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!
  if (depth > 5 || next() < 0.08) return pick(ODD_SCALARS)
  switch (shape.kind) {
    case 'struct': {
      const out: Record<string, unknown> = {}
      const fields = shuffled([...shape.fields], next).slice(0, 1 + Math.floor(next() * 6))
      for (const field of fields) set(out, field.name, next() < 0.15 ? pick([null, undefined, '', 0, false, [], {}]) : generate(field.shape, next, depth + 1))
      if (next() < 0.2) set(out, pick(ODD_KEYS), generate({ kind: 'unstructured' }, next, depth + 1))
      return out
    }
    case 'array':
      return Array.from({ length: Math.floor(next() * 3) }, () => (next() < 0.1 ? undefined : generate(shape.item, next, depth + 1)))
    case 'map': {
      const out: Record<string, unknown> = {}
      for (const key of shuffled([...ODD_KEYS], next).slice(0, Math.floor(next() * 4))) set(out, key, generate(shape.value, next, depth + 1))
      return out
    }
    case 'unstructured':
    case 'verbatim':
    case 'object': {
      if (next() < 0.5) return pick(ODD_SCALARS)
      if (next() < 0.3) return [generate({ kind: 'unstructured' }, next, depth + 1), pick(ODD_SCALARS)]
      const out: Record<string, unknown> = {}
      for (const key of shuffled([...ODD_KEYS], next).slice(0, 1 + Math.floor(next() * 3))) set(out, key, generate({ kind: 'unstructured' }, next, depth + 1))
      return out
    }
  }
}

function set(out: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true })
}

describe('copies in Go order, built without the text', () => {
  it("equal the parsed text for every kind's sample", () => {
    for (const sample of SAMPLES) {
      const body = { apiVersion: apiVersionOf(sample.gvr), kind: kindOfResource(sample.gvr), ...sample.body }
      assertBothCopies(body, sample.gvr)
      // The same object with its keys reversed at every level, as a client may send them.
      assertBothCopies(reversed(body) as Record<string, unknown>, `${sample.gvr}, keys reversed`)
    }
  })

  it('equal the parsed text for generated objects of every kind: odd values, odd keys, unset and empty fields', () => {
    for (const sample of SAMPLES) {
      const apiVersion = apiVersionOf(sample.gvr)
      const kind = kindOfResource(sample.gvr)
      const shape = shapeOfObject({ apiVersion, kind })
      for (let seed = 0; seed < 40; seed++) {
        const generated = generate(shape, random(seed), 0)
        if (typeof generated !== 'object' || generated === null || Array.isArray(generated)) continue
        const body = { apiVersion, kind, ...(generated as Record<string, unknown>) }
        assertBothCopies(body, `${sample.gvr}, seed ${seed}`)
      }
    }
  })

  it('give a value JSON writes its own way as JSON gives it back', () => {
    const odd = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', creationTimestamp: new Date(0) }, data: { a: 'b' }, extra: { when: new Date(0), n: -0 } }
    assertBothCopies(odd, 'a Date and -0')
    // Raw JSON (managedFields' fieldsV1) holding what JSON writes its own way or leaves out.
    const fieldsV1 = {
      date: new Date(0),
      own: { toJSON: () => 'told' },
      boxed: new String('s'),
      bare: Object.assign(Object.create(null) as object, { k: 1 }),
      list: [undefined, () => 1, Symbol('s'), Number.NaN, -0, { gone: undefined, fn: () => 1 }],
    }
    const managed = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', managedFields: [{ manager: 'm', operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1 }] } }
    assertBothCopies(managed, 'raw JSON with odd values')
    const copied = goEncodedCopy(managed) as { metadata: { managedFields: { fieldsV1: unknown }[] } }
    assert.equal(JSON.stringify(copied.metadata.managedFields[0]!.fieldsV1), '{"date":"1970-01-01T00:00:00.000Z","own":"told","boxed":"s","bare":{"k":1},"list":[null,null,null,null,0,{}]}')
    // What JSON cannot write at all fails the same way.
    assert.throws(() => goEncodedCopy({ apiVersion: 'v1', kind: 'ConfigMap', data: { n: 1n } }), TypeError)
    assert.equal(JSON.stringify(goEncodedCopy(odd)), '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","creationTimestamp":"1970-01-01T00:00:00.000Z"},"data":{"a":"b"},"extra":{"when":"1970-01-01T00:00:00.000Z","n":0}}')
  })
})

describe('copies in Go order, in steps', () => {
  it('copy a level of many keys and a list of many items in runs, with the same result as at once', () => {
    const keys = Array.from({ length: 20_000 }, (_, i) => `k${(i * 7919) % 20_000}`)
    const data = Object.fromEntries(keys.map((k) => [k, 'v']))
    const fieldsV1 = { 'f:data': Object.fromEntries(keys.map((k) => [`f:${k}`, {}])) }
    const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', managedFields: [{ manager: 'm', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1 }] }, data }
    const copy = runCounting(asGoEncodesInSteps(configMap))
    assertSameCopy(copy.value, byText(configMap, true), 'a ConfigMap of 20,000 keys')
    // Two levels of 20,000 entries, 2,048 entries between two checkpoints at most, and the keys sorted and merged in runs of 4,096.
    assert.ok(copy.checkpoints >= 20, `${copy.checkpoints} checkpoints`)
    const env = Array.from({ length: 10_000 }, (_, i) => ({ value: String(i), name: `E${i}` }))
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'i', env }] } }
    const podCopy = runCounting(canonicalCopyInSteps(pod))
    assertSameCopy(podCopy.value, byText(pod, false), 'a Pod of 10,000 variables')
    assert.ok(podCopy.checkpoints >= 4, `${podCopy.checkpoints} checkpoints`)
  })

  it('copy a small object at once (one checkpoint at most, where the walks before it filled a step)', () => {
    const small = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: 'b' } }
    for (let i = 0; i < 3000; i++) assert.ok(runCounting(canonicalCopyInSteps(small)).checkpoints <= 1)
  })
})

function reversed(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(reversed)
  if (typeof v !== 'object' || v === null) return v
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(v).reverse()) set(out, key, reversed((v as Record<string, unknown>)[key]))
  return out
}
