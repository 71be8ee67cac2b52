/**
 * cel-go's strings extension at the version Kubernetes uses (ext.Strings
 * version 2): what the library lacks of charAt, indexOf, lastIndexOf,
 * lowerAscii, upperAscii, replace, split, substring, trim, join, format and
 * strings.quote. (`reverse` came with version 3 and is not in Kubernetes'
 * environment.) Indexes count code points, as cel-go's do.
 */
import type { Environment } from '@marcbachmann/cel-js'
import { formatString } from './string-format.js'
import { charAt } from './code-points.js'

/** Receiver of `strings.quote`: the library cannot name a function `strings.x`, only a method on a constant. */
class StringsLibrary {}

/** cel-go's `replace(old, new, n)` (Go's strings.Replace): at most n replacements, all of them when n is negative. */
export function replace(text: string, from: string, to: string, limit: bigint): string {
  if (from === '') {
    // An empty pattern matches before every character and at the end.
    const chars = [...text]
    const n = limit < 0n ? chars.length + 1 : Number(limit < BigInt(chars.length + 1) ? limit : BigInt(chars.length + 1))
    const head = chars.slice(0, Math.min(n, chars.length)).map((c) => to + c)
    return head.join('') + (n > chars.length ? to : chars.slice(n).join(''))
  }
  // Every occurrence: the engine's own split and join, where a loop of appends took 0.6 s on a string of 3 million.
  if (limit < 0n) return text.split(from).join(to)
  let out = ''
  let pos = 0
  for (let done = 0n; done < limit; done++) {
    const at = text.indexOf(from, pos)
    if (at < 0) break
    out += text.slice(pos, at) + to
    pos = at + from.length
  }
  return out + text.slice(pos)
}

/** What cel-go's strings.quote escapes: CEL's own escape sequences, nothing else. */
const CEL_QUOTED = /["\\\x07\b\f\n\r\t\v]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g
const CEL_ESCAPES: Readonly<Record<string, string>> = { '"': '\\"', '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\x07': '\\a', '\b': '\\b', '\f': '\\f', '\v': '\\v' }

/**
 * strings.quote as cel-go's extension writes it: the string in double
 * quotes with CEL's escape sequences (`\a \b \f \n \r \t \v \\ \"`) and
 * every other character as it is, other control characters included (it is
 * not Go's strconv.Quote); a lone surrogate, which cel-go's string could not
 * hold, is the replacement character as cel-go's sanitizing makes an invalid
 * rune. The engine's own scan replaces them, not a character at a time (0.6 s
 * on a string of 3 million).
 */
export function quote(text: string): string {
  return `"${text.replace(CEL_QUOTED, (ch) => CEL_ESCAPES[ch] ?? '\ufffd')}"`
}

export function registerStrings(env: Environment): Environment {
  return env
    .registerFunction('string.replace(string, string): string', (s: string, from: string, to: string) => replace(s, from, to, -1n))
    .registerFunction('string.replace(string, string, int): string', (s: string, from: string, to: string, n: bigint) =>
      replace(s, from, to, n),
    )
    .registerFunction('string.charAt(int): string', (s: string, i: bigint) => charAt(s, i))
    .registerFunction('string.format(list): string', (s: string, args: unknown[]) => formatString(s, args))
    .registerType('StringsLibrary', StringsLibrary)
    .registerConstant('strings', 'StringsLibrary', new StringsLibrary())
    .registerFunction('StringsLibrary.quote(string): string', (_s: StringsLibrary, text: string) => quote(text))
}
