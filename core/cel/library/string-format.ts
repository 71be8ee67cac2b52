/**
 * cel-go's `"...".format([args])` (strings extension version 1): `%s`,
 * `%d`, `%f`/`%.Nf`, `%e`, `%b`, `%o`, `%x`, `%X` and `%%`, each verb taking
 * the next argument. A verb that does not fit its argument, or too few
 * arguments, is an error, as in cel-go, in its words (`error during
 * formatting: decimal clause can only be used on integers, was given
 * double`). `%s` writes what cel-go writes: a double as Go's %g, a uint, a
 * duration (`3600s`) and a type by value, and inside a list or a map each
 * element as a CEL literal (strings quoted, doubles with six decimals, a
 * map's keys sorted, `{"a":1}`).
 */

/** A value's class name, for the library's classes the package does not export (uint, duration, type). */
const className = (value: object): string => (value.constructor as { name?: string } | undefined)?.name ?? ''

/** cel-go's name of a value's type, as its format errors name it. */
function typeName(value: unknown): string {
  if (typeof value === 'bigint') return 'int'
  if (typeof value === 'number') return 'double'
  if (typeof value === 'string') return 'string'
  if (typeof value === 'boolean') return 'bool'
  if (value === null || value === undefined) return 'null_type'
  if (value instanceof Uint8Array) return 'bytes'
  if (value instanceof Date) return 'google.protobuf.Timestamp'
  if (Array.isArray(value)) return 'list'
  const name = className(value as object)
  if (name === 'UnsignedInt') return 'uint'
  if (name === 'Duration') return 'google.protobuf.Duration'
  if (name === 'Type') return 'type'
  if (name === 'Optional') return 'optional_type'
  return 'map'
}

/** Go's %q of a string: Go's escapes for quotes, backslashes and unprintable characters. */
function goQuote(text: string): string {
  let out = '"'
  for (const ch of text) {
    const c = ch.codePointAt(0) ?? 0
    if (ch === '"' || ch === '\\') out += `\\${ch}`
    else if (c === 7) out += '\\a'
    else if (c === 8) out += '\\b'
    else if (c === 12) out += '\\f'
    else if (c === 10) out += '\\n'
    else if (c === 13) out += '\\r'
    else if (c === 9) out += '\\t'
    else if (c === 11) out += '\\v'
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`
    else if (/[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Zl}\p{Zp}]/u.test(ch) || (/\p{Zs}/u.test(ch) && ch !== ' ')) {
      out += c > 0xffff ? `\\U${c.toString(16).padStart(8, '0')}` : `\\u${c.toString(16).padStart(4, '0')}`
    } else out += ch
  }
  return `${out}"`
}

/** Go's %g of a double: its shortest digits, in exponent form below 1e-4 and from 1e6 (`1e+06`). */
export function goG(n: number): string {
  if (Number.isNaN(n)) return 'NaN'
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : '-Inf'
  if (n === 0) return Object.is(n, -0) ? '-0' : '0'
  const [digits = '', exp = '0'] = n.toExponential().split('e')
  const e = Number(exp)
  if (e < -4 || e >= 6) return `${digits}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`
  return String(n)
}

/** A timestamp as Go's RFC 3339 with nanoseconds, trailing zeros of the fraction dropped. */
export const timestampText = (d: Date): string => d.toISOString().replace(/\.?0*Z$/, 'Z')

/** A duration as cel-go converts it to a string: its seconds, shortest, then `s`. */
export function durationText(d: { seconds: bigint; nanos: number }): string {
  const nanos = d.seconds * 1_000_000_000n + BigInt(d.nanos)
  const sign = nanos < 0n ? '-' : ''
  const abs = nanos < 0n ? -nanos : nanos
  const fraction = (abs % 1_000_000_000n).toString().padStart(9, '0').replace(/0+$/, '')
  return `${sign}${abs / 1_000_000_000n}${fraction ? `.${fraction}` : ''}s`
}

const clauseError = (text: string, value: unknown): Error => new Error(`error during formatting: ${text}, was given ${typeName(value)}`)

const STRING_CLAUSE = 'string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps'

/** `%s` of a value, as cel-go's strings extension formats it. */
function asText(value: unknown): string {
  if (typeof value === 'string') return value
  if (typeof value === 'bigint' || typeof value === 'boolean') return String(value)
  if (typeof value === 'number') return goG(value)
  if (value === null) return 'null'
  if (value instanceof Uint8Array) return new TextDecoder().decode(value)
  if (value instanceof Date) return timestampText(value)
  if (Array.isArray(value)) return `[${value.map(listElement).join(', ')}]`
  if (typeof value === 'object') {
    const name = className(value)
    if (name === 'UnsignedInt') return String(value)
    if (name === 'Duration') return durationText(value as { seconds: bigint; nanos: number })
    if (name === 'Type') return (value as { name: string }).name
    if (name === 'Optional') throw clauseError(STRING_CLAUSE, value)
    return mapText(value)
  }
  throw clauseError(STRING_CLAUSE, value)
}

/** A list's or a map's element inside `%s`, written as a CEL literal: strings quoted, doubles with six decimals. */
function listElement(value: unknown): string {
  if (typeof value === 'string') return goQuote(value)
  if (value instanceof Uint8Array) return `b${goQuote(asText(value))}`
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return goQuote(goG(value))
    return value.toFixed(6)
  }
  if (value instanceof Date) return `timestamp(${goQuote(timestampText(value))})`
  if (typeof value === 'object' && value !== null && className(value) === 'Duration') return `duration(${goQuote(asText(value))})`
  return asText(value)
}

function mapText(value: object): string {
  const entries: [unknown, unknown][] = value instanceof Map ? [...value.entries()] : Object.entries(value)
  const pairs = entries.map(([k, v]): [string, string] => {
    const key =
      typeof k === 'string' ? goQuote(k) : typeof k === 'boolean' || typeof k === 'bigint' || className(k as object) === 'UnsignedInt' ? String(k) : undefined
    if (key === undefined) throw new Error(`error during formatting: no formatting function for map key of type ${typeName(k)}`)
    return [key, listElement(v)]
  })
  pairs.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return `{${pairs.map(([k, v]) => `${k}:${v}`).join(', ')}}`
}

function integer(value: unknown, clause: string): bigint {
  if (typeof value === 'bigint') return value
  if (typeof value === 'object' && value !== null && className(value) === 'UnsignedInt') return BigInt(String(value))
  throw clauseError(clause, value)
}

function fixed(value: unknown, precision: number, verb: string): string {
  const special = value === 'NaN' || value === 'Infinity' || value === '-Infinity'
  if (typeof value !== 'number' && !special) {
    throw clauseError(verb === 'e' ? 'scientific clause can only be used on doubles' : 'fixed-point clause can only be used on doubles', value)
  }
  const n = Number(value)
  if (Number.isNaN(n)) return 'NaN'
  if (!Number.isFinite(n)) return n > 0 ? 'Infinity' : '-Infinity'
  return verb === 'e' ? n.toExponential(precision).replace(/e([+-])(\d)$/, 'e$10$2') : n.toFixed(precision)
}

const isDigit = (code: number): boolean => code >= 48 && code <= 57

const HEX_BYTES = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'))

/** Two hex digits a byte, joined in runs: a string of the bytes' digits, each mapped and joined, took 0.5 µs a byte. */
function hexOf(bytes: Uint8Array): string {
  let out = ''
  let run = ''
  for (let i = 0; i < bytes.length; i++) {
    run += HEX_BYTES[bytes[i] as number]
    if (run.length >= 8192) {
      out += run
      run = ''
    }
  }
  return out + run
}

export function formatString(template: string, args: readonly unknown[]): string {
  let out = ''
  let next = 0
  const take = () => {
    if (next >= args.length) throw new Error(`index ${next} out of range`)
    return args[next++]
  }
  for (let i = 0; i < template.length; i++) {
    if (template[i] !== '%') {
      // The text up to the next verb at once: a character at a time took 0.6 s on a template of 3 million.
      const verbAt = template.indexOf('%', i)
      const end = verbAt < 0 ? template.length : verbAt
      out += template.slice(i, end)
      i = end - 1
      continue
    }
    let precision: number | undefined
    let j = i + 1
    // Digits read in place: a pattern matched on the rest of the template at every verb cost a microsecond each.
    if (template[j] === '.' && isDigit(template.charCodeAt(j + 1))) {
      let end = j + 1
      while (isDigit(template.charCodeAt(end))) end++
      precision = Number(template.slice(j + 1, end))
      j = end
    }
    const verb = template[j]
    i = j
    switch (verb) {
      case '%':
        out += '%'
        break
      case 's':
        out += asText(take())
        break
      case 'd':
        out += integer(take(), 'decimal clause can only be used on integers').toString()
        break
      case 'f':
      case 'e':
        out += fixed(take(), precision ?? 6, verb)
        break
      case 'b': {
        const v = take()
        out += typeof v === 'boolean' ? (v ? '1' : '0') : integer(v, 'only integers and bools can be formatted as binary').toString(2)
        break
      }
      case 'o':
        out += integer(take(), 'octal clause can only be used on integers').toString(8)
        break
      case 'x':
      case 'X': {
        const v = take()
        const hex =
          typeof v === 'string'
            ? hexOf(new TextEncoder().encode(v))
            : v instanceof Uint8Array
              ? hexOf(v)
              : integer(v, 'only integers, byte buffers, and strings can be formatted as hex').toString(16)
        out += verb === 'X' ? hex.toUpperCase() : hex
        break
      }
      default:
        if (verb === undefined) {
          take()
          throw new Error('unexpected end of string')
        }
        throw new Error(`could not parse formatting clause: unrecognized formatting clause "${verb}"`)
    }
  }
  return out
}
