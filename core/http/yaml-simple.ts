/**
 * The YAML many bodies are when they are not JSON: maps nested in block
 * style, one `key: value` a line, plain keys and plain values. Read here a
 * line at a time with checkpoints, in a small part of the yaml package's
 * time and without its garbage (it allocates about 1.5 KB per character),
 * so that such a body needs neither a worker thread nor slices of the full
 * decoder. Anything else (sequences, quotes, anchors and aliases, tags,
 * flow collections, block scalars, comments after a value, documents
 * markers, tabs, carriage returns, a key twice, a value whose type a YAML
 * version could read otherwise) gives undefined at the first line that has
 * it, and the full decoder reads the body, with its own words for errors.
 */
import type { Checkpointed } from '../machinery/time-slice.js'

/** Lines read between two checkpoints. */
const LINES_PER_STEP = 256

/** A key or a value read as a string by every YAML version: a letter or `_` first, no indicator inside. */
const PLAIN_WORDS = /^[A-Za-z_][A-Za-z0-9_./ -]*$/
/** Keys the same, without spaces. */
const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_./-]*$/
/** A decimal integer that every YAML version reads as the same number. */
const PLAIN_INTEGER = /^(?:0|[1-9][0-9]{0,14})$/
/** Words one YAML version or another reads as a boolean or null: left to the full decoder. */
const TYPED_WORDS = new Set(['y', 'yes', 'n', 'no', 'true', 'false', 'on', 'off', 'null'])

const isTypedWord = (word: string): boolean => word.length <= 5 && TYPED_WORDS.has(word.toLowerCase())

/** A plain value as YAML reads it, or undefined when it is not one of the simple kinds. */
function plainValue(text: string): string | number | undefined {
  if (PLAIN_INTEGER.test(text)) return Number(text)
  if (!PLAIN_WORDS.test(text) || isTypedWord(text)) return undefined
  return text
}

interface OpenMap {
  indent: number
  map: Record<string, unknown>
}

/**
 * The value of `text` when it is a map of simple YAML (see above) nesting at
 * most `limit` levels, or undefined for the full decoder.
 */
export function* simpleYamlWalk(text: string, limit: number): Checkpointed<{ value: Record<string, unknown> } | undefined> {
  if (text.includes('\r') || text.includes('\t')) return undefined
  const root: Record<string, unknown> = {}
  const open: OpenMap[] = [{ indent: 0, map: root }]
  /** A `key:` with nothing after it: its value is the map of the next, deeper lines, or null. */
  let pending: { map: Record<string, unknown>; key: string; indent: number } | undefined
  let lines = 0
  for (let start = 0; start < text.length; ) {
    const newline = text.indexOf('\n', start)
    const end = newline < 0 ? text.length : newline
    const line = text.slice(start, end)
    start = end + 1
    if (++lines % LINES_PER_STEP === 0) yield
    const content = line.trimStart()
    if (content === '' || content.startsWith('#')) continue
    const indent = line.length - content.length
    if (pending) {
      const nested = pending.indent < indent
      pending.map[pending.key] = nested ? {} : null
      if (nested) {
        if (open.length >= limit) return undefined
        open.push({ indent, map: pending.map[pending.key] as Record<string, unknown> })
      }
      pending = undefined
    }
    while (open.length > 1 && open[open.length - 1]!.indent > indent) open.pop()
    const top = open[open.length - 1]!
    if (top.indent !== indent) return undefined
    const colon = content.indexOf(':')
    if (colon <= 0) return undefined
    const key = content.slice(0, colon)
    if (!PLAIN_KEY.test(key) || isTypedWord(key) || Object.hasOwn(top.map, key) || key === '__proto__') return undefined
    const rest = content.slice(colon + 1)
    if (rest.trim() === '') {
      pending = { map: top.map, key, indent }
      // Claimed now, so that the key counts as seen; its value is set by the next line.
      top.map[key] = null
      continue
    }
    if (!rest.startsWith(' ')) return undefined
    const value = plainValue(rest.trim())
    if (value === undefined) return undefined
    top.map[key] = value
  }
  if (pending) pending.map[pending.key] = null
  return Object.keys(root).length > 0 ? { value: root } : undefined
}
