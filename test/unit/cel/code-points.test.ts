/**
 * cel-go's code-point string functions on the runtime's own search: the
 * same answers and errors as comparing code point by code point (the
 * reference below), lone surrogates and pairs included, and a search of a
 * long string for a long one is one search of the runtime's, not one
 * comparison of the search string at every place.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { charAt, indexOf, lastIndexOf, substring } from '../../../core/cel/library/code-points.js'

const standsAt = (points: readonly string[], sub: readonly string[], at: number): boolean => sub.every((c, j) => points[at + j] === c)

const reference = {
  indexOf(text: string, search: string, offset = 0n): bigint {
    if (search === '') return offset
    const points = [...text]
    const sub = [...search]
    if (offset < 0n || offset >= BigInt(points.length)) throw new Error(`index out of range: ${offset}`)
    for (let i = Number(offset); i < points.length - (sub.length - 1); i++) if (standsAt(points, sub, i)) return BigInt(i)
    return -1n
  },
  lastIndexOf(text: string, search: string, offset?: bigint): bigint {
    const points = [...text]
    if (search === '') return offset ?? BigInt(points.length)
    const from = offset ?? BigInt(points.length - 1)
    const sub = [...search]
    if (from < 0n || from >= BigInt(points.length)) throw new Error(`index out of range: ${from}`)
    for (let i = Math.min(Number(from), points.length - sub.length); i >= 0; i--) if (standsAt(points, sub, i)) return BigInt(i)
    return -1n
  },
  charAt(text: string, index: bigint): string {
    const chars = [...text]
    if (index < 0n || index > BigInt(chars.length)) throw new Error(`index out of range: ${index}`)
    return chars[Number(index)] ?? ''
  },
  substring(text: string, [start, end]: readonly bigint[]): string {
    const points = [...text]
    const length = BigInt(points.length)
    const last = end ?? length
    if (end !== undefined && start! > end) throw new Error(`invalid substring range. start: ${start}, end: ${end}`)
    if (start! < 0n || start! > length) throw new Error(`index out of range: ${start}`)
    if (last < 0n || last > length) throw new Error(`index out of range: ${last}`)
    return points.slice(Number(start), Number(last)).join('')
  },
}

const outcome = (run: () => unknown): string => {
  try {
    return String(run())
  } catch (err) {
    return `error: ${(err as Error).message}`
  }
}

describe('code-point string functions', () => {
  it('answer as a comparison code point by code point does, over pairs, lone surrogates and offsets out of range', () => {
    const pieces = ['a', 'b', '😀', '\ud83d', '\ude00', 'é']
    let seed = 7
    const next = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff
      return (seed >> 8) % n
    }
    const text = (most: number): string => Array.from({ length: next(most + 1) }, () => pieces[next(pieces.length)]).join('')
    for (let k = 0; k < 20_000; k++) {
      const t = text(8)
      const s = text(3)
      const from = BigInt(next(12) - 2)
      const to = BigInt(next(12) - 2)
      const cases: [string, () => unknown, () => unknown][] = [
        ['indexOf', () => indexOf(t, s), () => reference.indexOf(t, s)],
        ['indexOf at', () => indexOf(t, s, from), () => reference.indexOf(t, s, from)],
        ['lastIndexOf', () => lastIndexOf(t, s), () => reference.lastIndexOf(t, s)],
        ['lastIndexOf at', () => lastIndexOf(t, s, from), () => reference.lastIndexOf(t, s, from)],
        ['substring', () => substring(t, [from]), () => reference.substring(t, [from])],
        ['charAt', () => charAt(t, from), () => reference.charAt(t, from)],
        ['substring range', () => substring(t, [from, to]), () => reference.substring(t, [from, to])],
      ]
      for (const [name, got, want] of cases) assert.equal(outcome(got), outcome(want), `${name}(${JSON.stringify(t)}, ${JSON.stringify(s)}, ${from}, ${to})`)
    }
  })

  it('searches a long string for a long one with the runtime, a few searches in all', () => {
    const text = `${'a'.repeat(100_000)}😀`
    const search = `${'a'.repeat(2000)}b`
    const native = String.prototype.indexOf
    const nativeLast = String.prototype.lastIndexOf
    let searches = 0
    String.prototype.indexOf = function (this: string, ...args: Parameters<typeof native>) {
      searches++
      return native.apply(this, args)
    }
    String.prototype.lastIndexOf = function (this: string, ...args: Parameters<typeof nativeLast>) {
      searches++
      return nativeLast.apply(this, args)
    }
    try {
      assert.equal(indexOf(text, search), -1n)
      assert.equal(lastIndexOf(text, `b${search}`), -1n)
      assert.equal(indexOf(text, '😀'), 100_000n)
    } finally {
      String.prototype.indexOf = native
      String.prototype.lastIndexOf = nativeLast
    }
    assert.equal(searches, 3, 'one search of the runtime for each call')
  })
})
