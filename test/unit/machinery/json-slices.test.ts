import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { duplicateJsonFieldsWalk } from '../../../core/http/duplicate-fields.js'
import { overflowingNumber, parseJsonWalk } from '../../../core/machinery/json-slices.js'
import { jsonTooDeepWalk } from '../../../core/machinery/limits.js'
import { runAtOnce, runInSlices } from '../../../core/machinery/time-slice.js'

/** What JSON.parse gives, or undefined when it throws or holds a number beyond float64 (left to JSON.parse and refused after it). */
function reference(text: string): { value: unknown } | undefined {
  try {
    const value: unknown = JSON.parse(text)
    return overflowingNumber(text) === undefined ? { value } : undefined
  } catch {
    return undefined
  }
}

/** Equal values with keys in the same order, as a later JSON.stringify would show. */
function assertSame(text: string): void {
  const ours = runAtOnce(parseJsonWalk(text))
  const theirs = reference(text)
  assert.equal(ours === undefined, theirs === undefined, `acceptance differs for ${JSON.stringify(text)}`)
  if (ours && theirs) {
    assert.deepEqual(ours.value, theirs.value)
    assert.equal(JSON.stringify(ours.value), JSON.stringify(theirs.value))
  }
}

describe('JSON parsed with checkpoints', () => {
  it('builds what JSON.parse builds, for any JSON text', () => {
    fc.assert(fc.property(fc.json(), assertSame), { numRuns: 1000, seed: 14 })
  })

  it('accepts and refuses exactly what JSON.parse does, for mangled texts', () => {
    const mangled = fc
      .tuple(fc.json(), fc.nat(), fc.constantFrom('', ' ', ',', '"', '\\', '{', '}', '[', ']', ':', '0', '-', '.', 'e', '\u0001', 'tru', 'x'), fc.nat(3))
      .map(([text, at, insert, drop]) => {
        const i = text.length === 0 ? 0 : at % text.length
        return text.slice(0, i) + insert + text.slice(i + drop)
      })
    fc.assert(fc.property(mangled, assertSame), { numRuns: 3000, seed: 14 })
  })

  it('reads duplicate keys, __proto__ and escapes as JSON.parse does', () => {
    for (const text of [
      '{"a":1,"b":2,"a":3}',
      '{"__proto__":{"x":1}}',
      '{"2":1,"1":2,"b":3}',
      '"\\u00e9\\n\\ud83d\\ude00"',
      ' [ 1 , -0 , 1e308 , 2.5E-3 , true , null ] ',
      ' [ 1 , -0 , 1e400 , 2.5E-3 , true , null ] ',
      '',
      '[1,]',
      '{"a" 1}',
      '"\\x"',
      '01',
    ])
      assertSame(text)
  })

  it('builds a megabyte of small objects in slices to the same value', async () => {
    const text = JSON.stringify({ items: Array.from({ length: 50_000 }, (_, i) => ({ i, s: `v${i}`, a: [i, null] })), long: 'x'.repeat(300_000) })
    assert.deepEqual((await runInSlices(parseJsonWalk(text)))?.value, JSON.parse(text))
  })

  it('reads keys and strings longer than a step, escapes and unfinished ones at a step end, as JSON.parse does', () => {
    const run = 1 << 16
    for (const at of [run - 3, run - 2, run - 1, run, run + 1]) {
      const head = 'x'.repeat(at)
      for (const text of [
        `{"${head}\\"":1}`,
        `["${head}\\u00e9", "${head}"]`,
        `{"k":"${head}"}`,
        `"${head}`,
        `"${head}\\`,
        `["${head}\u0001"]`,
      ])
        assertSame(text)
    }
  })
})

describe('one string of megabytes, read with checkpoints', () => {
  /** How many times the walk stops at a checkpoint before it ends, and what it returns. */
  function steps<T>(walk: Generator<void, T, void>): { count: number; value: T } {
    let count = 0
    for (;;) {
      const step = walk.next()
      if (step.done) return { count, value: step.value }
      count++
    }
  }
  const MiB = 1024 * 1024
  const plain = JSON.stringify({ data: { a: 'é'.repeat(2 * MiB) } })
  // Escapes throughout, surrogate pairs written as two escapes among them, so that cuts fall between the halves of some.
  const escaped = `{"data":{"a":"${'\\u00e9x\\n\\ud83d\\ude00'.repeat(200_000)}"}}`

  it('the depth check stops inside the string, not only between values', () => {
    const { count, value } = steps(jsonTooDeepWalk(plain))
    assert.equal(value, undefined)
    assert.ok(count >= (2 * MiB) / 65536, `${count} checkpoints`)
  })

  it('the duplicate-field scan stops inside the string', () => {
    const { count, value } = steps(duplicateJsonFieldsWalk(plain))
    assert.deepEqual(value, [])
    assert.ok(count >= (2 * MiB) / 65536, `${count} checkpoints`)
  })

  it('the parser unescapes an escaped string a piece at a time, to what JSON.parse reads', () => {
    const { count, value } = steps(parseJsonWalk(escaped))
    assert.ok(count >= (2 * escaped.length) / 65536, `${count} checkpoints`)
    assert.equal((value?.value as { data: { a: string } }).data.a, (JSON.parse(escaped) as { data: { a: string } }).data.a)
  })

  it('escapes of any kind in a long string read as JSON.parse reads them, or are refused as it refuses them', () => {
    const piece = fc.constantFrom('x', 'é', '\\n', '\\"', '\\\\', '\\/', '\\u00e9', '\\ud83d', '\\ude00', '\\ud83d\\ude00', '\\u12', '\\q', '\u0001', '😀')
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), fc.integer({ min: 65536 - 12, max: 65536 + 12 }), (pieces, pad) => {
        assertSame(`["${'y'.repeat(pad)}${pieces.join('')}${'z'.repeat(pad)}${pieces.join('')}"]`)
      }),
      { numRuns: 150, seed: 14 },
    )
  })
})
