/**
 * The bytes a JSON value takes as UTF-8 JSON text (what
 * `JSON.stringify` then `TextEncoder` would give), counted by walking it
 * with checkpoints instead of writing the text: a JSON patch's copies are
 * measured this way against upstream's budget, and the memory store's large
 * objects against its size limit; either may be megabytes.
 */
import type { Checkpointed } from './time-slice.js'

/** Keys of one object read between two checkpoints, less one (a mask). */
const KEYS_RUN = 4095

/** Characters of a string looked at between two checkpoints. */
const STRING_RUN = 1 << 16

/** Escapes, control characters, quotes and anything past ASCII: where a character is not one byte. */
const NOT_PLAIN = /[\u0000-\u001f"\\\u007f-\uffff]/

function* stringBytes(s: string): Checkpointed<number> {
  let bytes = 2 // the quotes
  for (let start = 0; start < s.length; start += STRING_RUN) {
    const end = Math.min(s.length, start + STRING_RUN)
    const run = s.slice(start, end)
    if (!NOT_PLAIN.test(run)) {
      bytes += run.length
    } else {
      for (let i = start; i < end; i++) bytes += charBytes(s, i)
    }
    if (end < s.length) yield
  }
  return bytes
}

/** What JSON.stringify writes for the code unit at `i`, in UTF-8 bytes. */
function charBytes(s: string, i: number): number {
  const c = s.charCodeAt(i)
  if (c === 0x22 || c === 0x5c || c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d) return 2
  if (c < 0x20) return 6 // \u00XX
  if (c < 0x80) return 1
  if (c < 0x800) return 2
  if (c >= 0xd800 && c <= 0xdbff) {
    const next = s.charCodeAt(i + 1)
    // A pair is one 4-byte character, counted at its first half; a lone half is written \uXXXX.
    return next >= 0xdc00 && next <= 0xdfff ? 4 : 6
  }
  if (c >= 0xdc00 && c <= 0xdfff) {
    const prev = s.charCodeAt(i - 1)
    return prev >= 0xd800 && prev <= 0xdbff ? 0 : 6
  }
  return 3
}

function scalarBytes(value: unknown): number {
  if (value === null) return 4
  if (typeof value === 'boolean') return value ? 4 : 5
  if (typeof value === 'number') return Number.isFinite(value) ? String(value).length : 4
  return 0
}

/**
 * The UTF-8 length of JSON.stringify(value); undefined counts 0. `known`
 * gives the size of a node already measured (one that cannot have changed
 * since), which is then not walked again.
 */
export function* jsonBytes(value: unknown, known?: (node: object) => number | undefined): Checkpointed<number> {
  if (value === undefined) return 0
  let bytes = 0
  const pending: unknown[] = [value]
  for (let visited = 1; pending.length > 0; visited++) {
    const node = pending.pop()
    if (typeof node === 'string') bytes += node.length > STRING_RUN ? yield* stringBytes(node) : runString(node)
    else if (node === null || typeof node !== 'object') bytes += scalarBytes(node)
    else if (known?.(node) !== undefined) bytes += known(node)!
    else if (Array.isArray(node)) {
      bytes += 2 + Math.max(0, node.length - 1)
      for (let i = 0; i < node.length; i++) pending.push(node[i] === undefined ? null : node[i])
    } else {
      // Keys read by index, not as entries: a copy may hold a million objects, each an array more.
      const object = node as Record<string, unknown>
      const keys = Object.keys(object)
      let fields = 0
      for (let i = 0; i < keys.length; i++) {
        const child = object[keys[i]!]
        // A level of a few hundred thousand keys is read in runs too.
        if ((i & KEYS_RUN) === KEYS_RUN) yield
        if (child === undefined) continue
        fields++
        bytes += runString(keys[i]!)
        pending.push(child)
      }
      bytes += 2 + Math.max(0, fields - 1) + fields // braces, commas, colons
    }
    if ((visited & 1023) === 0) yield
  }
  return bytes
}

/** A short string's bytes, at once. */
function runString(s: string): number {
  if (!NOT_PLAIN.test(s)) return s.length + 2
  let bytes = 2
  for (let i = 0; i < s.length; i++) bytes += charBytes(s, i)
  return bytes
}
