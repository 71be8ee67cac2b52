/**
 * Decodes a JSON object into named fields as Go's encoding/json decodes it
 * into a struct of strings and int64s, with Go's error for what does not
 * fit: the scanner's syntax error first, then the first value of the wrong
 * type (`json: cannot unmarshal number 1e1 into Go struct field
 * continueToken.rv of type int64`). As Go's decoder: a key matches its field
 * exactly or else regardless of case, a later duplicate wins, null leaves a
 * field as it was, unknown keys are skipped, and an int64 takes only an
 * integer literal within its range (not `1e1`, `1.0` or 2^63).
 *
 * The input has passed Go's syntax check when the walk below runs, so the
 * walk only steps over well-formed values.
 */
import { goJsonSyntaxError } from './go-json-check.js'

export type GoFieldKind = 'string' | 'int64'

/** A decoded int64: a number, or a bigint past 2^53. */
export type GoInt64 = number | bigint

export type GoStructValues<F extends Record<string, GoFieldKind>> = { [K in keyof F]?: F[K] extends 'string' ? string : GoInt64 }

const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

/** Go's name for the kind of JSON value starting at `text[at]`. */
function valueKind(c: string): 'object' | 'array' | 'string' | 'bool' | 'null' | 'number' {
  if (c === '{') return 'object'
  if (c === '[') return 'array'
  if (c === '"') return 'string'
  if (c === 't' || c === 'f') return 'bool'
  if (c === 'n') return 'null'
  return 'number'
}

const isSpace = (c: string | undefined): boolean => c === ' ' || c === '\t' || c === '\n' || c === '\r'

/** Where the well-formed value starting at `at` ends. */
function valueEnd(text: string, at: number): number {
  const c = text[at]
  if (c === '"') {
    let i = at + 1
    while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1
    return i + 1
  }
  if (c === '{' || c === '[') {
    let depth = 0
    let i = at
    do {
      const d = text[i]
      if (d === '"') {
        i = valueEnd(text, i)
        continue
      }
      if (d === '{' || d === '[') depth++
      else if (d === '}' || d === ']') depth--
      i++
    } while (depth > 0)
    return i
  }
  let i = at
  while (i < text.length && !isSpace(text[i]) && text[i] !== ',' && text[i] !== '}' && text[i] !== ']') i++
  return i
}

function skipSpace(text: string, at: number): number {
  while (isSpace(text[at])) at++
  return at
}

/** The members of the well-formed object starting at `at`: each key, decoded, and its value's text. */
function members(text: string, at: number): [string, string][] {
  const out: [string, string][] = []
  let i = skipSpace(text, at + 1)
  while (text[i] !== '}') {
    const keyEnd = valueEnd(text, i)
    const key = JSON.parse(text.slice(i, keyEnd)) as string
    const valueAt = skipSpace(text, skipSpace(text, keyEnd) + 1)
    const end = valueEnd(text, valueAt)
    out.push([key, text.slice(valueAt, end)])
    i = skipSpace(text, end)
    if (text[i] === ',') i = skipSpace(text, i + 1)
  }
  return out
}

/** An integer literal within int64, as strconv.ParseInt reads it; undefined otherwise. */
function int64Of(literal: string): GoInt64 | undefined {
  if (!/^-?\d+$/.test(literal)) return undefined
  const value = BigInt(literal)
  if (value < INT64_MIN || value > INT64_MAX) return undefined
  return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value
}

/**
 * The fields of the struct `typeName` (as Go prints it, `storage.continueToken`)
 * read from `bytes`, or Go's error text.
 */
export function decodeGoStruct<F extends Record<string, GoFieldKind>>(
  bytes: Uint8Array,
  typeName: string,
  fields: F,
): { values: GoStructValues<F> } | { error: string } {
  const syntax = goJsonSyntaxError(bytes)
  if (syntax) return { error: syntax }
  // Valid UTF-8 is not required of JSON by Go's scanner; a replacement character changes no structure.
  const text = new TextDecoder().decode(bytes)
  const start = skipSpace(text, 0)
  const top = valueKind(text[start]!)
  const values: Record<string, GoInt64 | string> = {}
  if (top === 'null') return { values: values as GoStructValues<F> }
  if (top !== 'object') return { error: `json: cannot unmarshal ${top} into Go value of type ${typeName}` }
  const structName = typeName.slice(typeName.lastIndexOf('.') + 1)
  const names = Object.keys(fields)
  let firstError: string | undefined
  for (const [key, raw] of members(text, start)) {
    const name = names.find((n) => n === key) ?? names.find((n) => n.toLowerCase() === key.toLowerCase())
    if (name === undefined) continue
    const kind = fields[name]!
    const found = valueKind(raw[0]!)
    if (found === 'null') continue
    const wrong = (what: string): void => {
      firstError ??= `json: cannot unmarshal ${what} into Go struct field ${structName}.${name} of type ${kind}`
    }
    if (kind === 'string') {
      if (found === 'string') values[name] = JSON.parse(raw) as string
      else wrong(found)
    } else if (found === 'number') {
      const n = int64Of(raw)
      if (n === undefined) wrong(`number ${raw}`)
      else values[name] = n
    } else wrong(found)
  }
  return firstError ? { error: firstError } : { values: values as GoStructValues<F> }
}
