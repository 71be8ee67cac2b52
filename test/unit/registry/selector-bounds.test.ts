import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { StatusError } from '../../../core/machinery/status-error.js'
import { parseFieldSelector, parseFieldSelectorInSlices } from '../../../core/machinery/field-selector.js'
import { type LabelRequirement, parseLabelSelector, parseLabelSelectorInSlices } from '../../../core/machinery/label-selector.js'

/** Each requirement checked in turn, as upstream's Requirement.Matches: what the folded matcher must agree with. */
function oneByOne(requirements: readonly LabelRequirement[], labels: Record<string, string>): boolean {
  return requirements.every((r) => {
    const has = Object.hasOwn(labels, r.key)
    const value = labels[r.key]
    switch (r.operator) {
      case 'in':
      case '=':
      case '==':
        return has && r.values.includes(value!)
      case 'notin':
      case '!=':
        return !has || !r.values.includes(value!)
      case 'exists':
        return has
      case '!':
        return !has
      case 'gt':
      case 'lt':
        if (!has || !/^-?\d+$/.test(value!)) return false
        return r.operator === 'gt' ? BigInt(value!) > BigInt(r.values[0]!) : BigInt(value!) < BigInt(r.values[0]!)
    }
  })
}

const SELECTORS = [
  'a=1,a!=2',
  'a=1,a=2',
  'a in (1,2),a notin (2,3)',
  'a in (1,2),a in (2,3)',
  'a>1,a<5,a!=3',
  'a>1,a>3',
  'a,!b,c notin (x)',
  'a,!a',
  'a=1,b=2,c=3,d=4',
  'x!=1,y!=2,z notin (3,4)',
]
const LABELS: Array<Record<string, string>> = [
  {},
  { a: '1' },
  { a: '2' },
  { a: '3' },
  { a: '4' },
  { a: '1', b: '2' },
  { a: '1', b: '2', c: '3', d: '4' },
  { a: 'x', c: 'x' },
  { a: 'x', c: 'y' },
  { x: '1' },
  { x: '2', y: '1', z: '5' },
  { z: '4' },
]

describe('selectors of any length', () => {
  it('match as their requirements checked one by one would', () => {
    for (const text of SELECTORS) {
      const selector = parseLabelSelector(text)
      for (const labels of LABELS) {
        assert.equal(selector.matches(labels), oneByOne(selector.requirements, labels), `${text} on ${JSON.stringify(labels)}`)
      }
    }
  })

  // A key's requirements are folded into one entry: a lone `=` is kept apart from keys with several (or other)
  // requirements, and a second requirement on the same key moves it over. Every mix is tried on random labels.
  it('match as their requirements checked one by one would, on random selectors mixing requirements on the same keys', () => {
    let seed = 7
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n)
    const pick = <T>(xs: readonly T[]) => xs[random(xs.length)]!
    const [keys, values] = [['a', 'b', 'c'], ['1', '2', '3']]
    const requirement = (): string => {
      const [k, v, w] = [pick(keys), pick(values), pick(values)]
      return pick([`${k}=${v}`, `${k}==${v}`, `${k}!=${v}`, `${k} in (${v})`, `${k} in (${v},${w})`, `${k} notin (${v},${w})`, k, `!${k}`, `${k}>${v}`, `${k}<${v}`])
    }
    for (let i = 0; i < 3000; i++) {
      const selector = parseLabelSelector(Array.from({ length: 1 + random(4) }, requirement).join(','))
      const labels: Record<string, string> = {}
      for (const k of keys) if (random(3) > 0) labels[k] = pick(values)
      assert.equal(selector.matches(labels), oneByOne(selector.requirements, labels), `${selector.toString()} on ${JSON.stringify(labels)}`)
    }
  })

  // A watch keeps its selector as long as it lives: a megabyte of `key=value` (150,000 requirements, upstream's
  // bound on a request line) took some 95 MB each, and forty such watches ended the process.
  it('keep a selector of 150,000 key=value requirements in under 40 MB', async () => {
    const { setFlagsFromString } = await import('node:v8')
    const { runInNewContext } = await import('node:vm')
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    const text = Array.from({ length: 150_000 }, (_, i) => `${i.toString(36)}=b`).join(',')
    gc()
    const before = process.memoryUsage().heapUsed
    const selector = parseLabelSelector(text)
    assert.equal(selector.matches({ a: 'b' }), false)
    gc()
    const kept = process.memoryUsage().heapUsed - before
    assert.ok(kept < 40 * 1024 * 1024, `${(kept / 1024 / 1024).toFixed(1)} MB`)
    assert.equal(selector.requirements.length, 150_000)
  })

  it('list requirements sorted by key with sorted values, however they were written', () => {
    const selector = parseLabelSelector('z notin (c,a,b),a in (y,x),m')
    assert.deepEqual(
      selector.requirements.map((r) => [r.key, r.operator, r.values]),
      [
        ['a', 'in', ['x', 'y']],
        ['m', 'exists', []],
        ['z', 'notin', ['a', 'b', 'c']],
      ],
    )
    assert.equal(selector.toString(), 'a in (x,y),m,z notin (a,b,c)')
  })

  it('name a bad value of a set by its index among the sorted values, as upstream', () => {
    assert.throws(
      () => parseLabelSelector('a in (zz,-x,b)'),
      (err: unknown) => err instanceof StatusError && err.code === 400 && /^unable to parse requirement: values\[0\]\[a\]: Invalid value: "-x"/.test(err.message),
    )
  })

  it('parse twenty thousand terms and a fifty-thousand-value set to the same selector in slices as at once', async () => {
    const terms = Array.from({ length: 20000 }, (_, i) => `k${i}!=v`).join(',')
    const set = `k in (${Array.from({ length: 50000 }, (_, i) => `v${i}`).join(',')})`
    for (const text of [terms, set]) {
      const sliced = await parseLabelSelectorInSlices(text)
      assert.equal(sliced.toString(), parseLabelSelector(text).toString())
    }
    const terms20k = await parseLabelSelectorInSlices(terms)
    assert.equal(terms20k.matches({ k7: 'v' }), false)
    assert.equal(terms20k.matches({ k7: 'w', other: 'v' }), true)
  })

  it('let timers run while a megabyte of selector is parsed', async () => {
    const text = Array.from({ length: 70000 }, (_, i) => `key${i}!=value${i}`).join(',')
    let ticks = 0
    let parsing = true
    const tick = (): void => {
      ticks++
      if (parsing) setTimeout(tick, 0)
    }
    setTimeout(tick, 0)
    const selector = await parseLabelSelectorInSlices(text)
    parsing = false
    assert.equal(selector.requirements.length, 70000)
    assert.ok(ticks > 0, 'the parse never let a timer run')
  })

  it('field selectors: many terms on one field fold into one check, and the smallest bad term is the one reported', async () => {
    const many = Array.from({ length: 20000 }, (_, i) => `metadata.name!=n${i}`).join(',')
    const selector = await parseFieldSelectorInSlices(many)
    assert.equal(selector.requirements.length, 20000)
    assert.equal(selector.matches({ 'metadata.name': 'n19999' }), false)
    assert.equal(selector.matches({ 'metadata.name': 'web' }), true)
    assert.equal(parseFieldSelector('a=1,a=2').matches({ a: '1' }), false)
    assert.equal(parseFieldSelector('a=1,a==1').matches({ a: '1' }), true)
    // Upstream sorts the terms before reading them: 'b' is met before 'c'.
    assert.throws(() => parseFieldSelector('a=1,c,b'), { message: "invalid selector: 'a=1,c,b'; can't understand 'b'" })
    assert.deepEqual(
      parseFieldSelector('b=2,a!=1').requirements.map((r) => r.field),
      ['a', 'b'],
    )
  })
})
