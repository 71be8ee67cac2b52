/**
 * The few cel-go and Kubernetes library functions that @marcbachmann/cel-js
 * lacks and that people write in authentication and authorization files.
 *
 * Already built into the library: `contains`, `startsWith`, `endsWith`,
 * `matches`, `indexOf`, `lastIndexOf`, `lowerAscii`, `upperAscii`, `split`,
 * `substring`, `trim`, `join`, `size`, the macros (`has`, `all`, `exists`,
 * `exists_one`, `map`, `filter`), conversions, timestamps and durations,
 * and optionals (`.?field`, `[?key]`, `orValue`, `optional.of/none`).
 *
 * Added here: `replace` (2 and 3 arguments), `charAt`, `reverse`,
 * `int(timestamp)`, and `sets.contains/equivalent/intersects`.
 *
 * Not available (an expression using them fails to compile at load time):
 * `format`, `quote`, regex `find`/`findAll`, the list library (`isSorted`,
 * `sum`, `min`, `max`, `slice`, `flatten`, `sort`, `distinct`), `url()`,
 * `ip()`/`cidr()`, `quantity()`, `semver()`, `base64.*` and the authz library.
 */
import type { Environment } from '@marcbachmann/cel-js'

/** Receiver of the `sets.*` functions: the library cannot name a function `sets.x`, only a method on a constant. */
class SetsLibrary {}

/** CEL equality for the values lists hold here: numbers compare across int and double, everything else strictly. */
function celEqual(a: unknown, b: unknown): boolean {
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number')) {
    return a == b // loose equality compares a bigint with a number by value
  }
  return a === b
}

const has = (list: readonly unknown[], value: unknown) => list.some((item) => celEqual(item, value))

/** cel-go's `replace(old, new, n)` (Go's strings.Replace): at most n replacements, all of them when n is negative. */
function replace(text: string, from: string, to: string, limit: bigint): string {
  if (from === '') {
    // An empty pattern matches before every character and at the end.
    const chars = [...text]
    const n = limit < 0n ? chars.length + 1 : Number(limit < BigInt(chars.length + 1) ? limit : BigInt(chars.length + 1))
    const head = chars.slice(0, Math.min(n, chars.length)).map((c) => to + c)
    return head.join('') + (n > chars.length ? to : chars.slice(n).join(''))
  }
  let out = ''
  let pos = 0
  for (let done = 0n; limit < 0n || done < limit; done++) {
    const at = text.indexOf(from, pos)
    if (at < 0) break
    out += text.slice(pos, at) + to
    pos = at + from.length
  }
  return out + text.slice(pos)
}

export function registerExtensions(env: Environment): Environment {
  return env
    .registerFunction('string.replace(string, string): string', (s: string, from: string, to: string) => replace(s, from, to, -1n))
    .registerFunction('string.replace(string, string, int): string', (s: string, from: string, to: string, n: bigint) =>
      replace(s, from, to, n),
    )
    .registerFunction('string.charAt(int): string', (s: string, i: bigint) => {
      const chars = [...s]
      if (i < 0n || i > BigInt(chars.length)) throw new Error(`index out of range: ${i}`)
      return chars[Number(i)] ?? ''
    })
    .registerFunction('string.reverse(): string', (s: string) => [...s].reverse().join(''))
    .registerFunction('int(google.protobuf.Timestamp): int', (t: Date) => BigInt(Math.floor(t.getTime() / 1000)))
    .registerType('SetsLibrary', SetsLibrary)
    .registerConstant('sets', 'SetsLibrary', new SetsLibrary())
    .registerFunction('SetsLibrary.contains(list, list): bool', (_s: SetsLibrary, a: unknown[], b: unknown[]) =>
      b.every((x) => has(a, x)),
    )
    .registerFunction('SetsLibrary.equivalent(list, list): bool', (_s: SetsLibrary, a: unknown[], b: unknown[]) =>
      b.every((x) => has(a, x)) && a.every((x) => has(b, x)),
    )
    .registerFunction('SetsLibrary.intersects(list, list): bool', (_s: SetsLibrary, a: unknown[], b: unknown[]) =>
      a.some((x) => has(b, x)),
    )
}
