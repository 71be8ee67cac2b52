/**
 * CEL's message construction (`Object{spec: Object.spec{replicas: 3}}`,
 * `JSONPatch{op: "add", path: "/x", value: 1}`), which mutating admission
 * policies write, for a CEL library that only knows map literals: the
 * source is rewritten before it is parsed, each `TypeName{field: v}` into
 * `{"field": v}`. Upstream builds typed objects there; as plain maps they
 * merge and patch alike, since an apply configuration and a JSON patch
 * operation are JSON in the end.
 *
 * Each field's value is wrapped in `dyn()`, since a message's fields have
 * types of their own while a map literal's values must agree. The rewrite
 * reads the source token by token so that braces and colons inside string
 * literals are left alone.
 */

const IDENT_START = /[_a-zA-Z]/
const IDENT_PART = /[_a-zA-Z0-9]/
/** Words before a brace that start a map literal, not a message. */
const NOT_TYPE_NAMES = new Set(['in', 'true', 'false', 'null'])

/** The index just past the string literal starting at `start` (quote, triple quote, raw or bytes prefix handled by the caller). */
function skipString(source: string, start: number, raw: boolean): number {
  const quote = source[start] as string
  const triple = source.startsWith(quote.repeat(3), start)
  const close = triple ? quote.repeat(3) : quote
  let i = start + close.length
  while (i < source.length) {
    if (!raw && source[i] === '\\') {
      i += 2
      continue
    }
    if (source.startsWith(close, i)) return i + close.length
    if (!triple && source[i] === '\n') return i
    i++
  }
  return i
}

interface Frame {
  /** A message construction: its field names are quoted. */
  message: boolean
  /** Whether the next token starts a field initializer (after `{` or `,`). */
  atField: boolean
  /** Brackets and parentheses open inside the current value. */
  nesting: number
  /** A field's value is wrapped in `dyn(`, to be closed at its end. */
  valueOpen: boolean
}

/** `source` with every message construction written as a map literal; unchanged when there is none. */
export function messagesAsMaps(source: string): string {
  if (!source.includes('{')) return source
  let out = ''
  const stack: Frame[] = []
  let i = 0
  // The type name read last, with where it starts in `out`, while nothing but spaces followed it.
  let pendingName: { outStart: number; name: string } | undefined
  while (i < source.length) {
    const c = source[i] as string
    const top = stack[stack.length - 1]
    if (c === '"' || c === "'") {
      const end = skipString(source, i, false)
      out += source.slice(i, end)
      i = end
      pendingName = undefined
      if (top) top.atField = false
      continue
    }
    if ((c === 'r' || c === 'R' || c === 'b' || c === 'B') && /["']/.test(source[i + 1] ?? '') && !IDENT_PART.test(source[i - 1] ?? '')) {
      const end = skipString(source, i + 1, c === 'r' || c === 'R')
      out += source.slice(i, end)
      i = end
      pendingName = undefined
      if (top) top.atField = false
      continue
    }
    if (IDENT_START.test(c) && !IDENT_PART.test(source[i - 1] ?? '')) {
      let end = i + 1
      while (end < source.length && IDENT_PART.test(source[end] as string)) end++
      const word = source.slice(i, end)
      // A field name of a message: quoted when a colon follows.
      let after = end
      while (/\s/.test(source[after] ?? '')) after++
      if (top?.message && top.atField && source[after] === ':') {
        out += `${JSON.stringify(word)}: dyn(`
        top.atField = false
        top.valueOpen = true
        i = after + 1
        continue
      }
      // A qualified name continues a pending one (`Object.spec`); anything else starts one.
      const continues = pendingName && out.endsWith('.')
      if (continues && pendingName) pendingName = { outStart: pendingName.outStart, name: `${pendingName.name}${word}` }
      else pendingName = NOT_TYPE_NAMES.has(word) ? undefined : { outStart: out.length, name: word }
      out += word
      i = end
      if (top) top.atField = false
      continue
    }
    if (c === '.' && pendingName && out.length > 0 && !/\s/.test(out[out.length - 1] ?? '')) {
      out += c
      i++
      continue
    }
    if (c === '{') {
      if (pendingName && !out.trimEnd().endsWith('.')) {
        // `Name{` or `Name {`: drop the type name, keep a plain map literal.
        out = out.slice(0, pendingName.outStart)
        stack.push({ message: true, atField: true, nesting: 0, valueOpen: false })
      } else stack.push({ message: false, atField: true, nesting: 0, valueOpen: false })
      out += '{'
      pendingName = undefined
      i++
      continue
    }
    if (top && (c === '(' || c === '[')) top.nesting++
    if (top && (c === ')' || c === ']')) top.nesting--
    if (top?.valueOpen && top.nesting === 0 && (c === ',' || c === '}')) {
      out += ')'
      top.valueOpen = false
    }
    if (c === '}') stack.pop()
    if (c === ',' && top) top.atField = true
    else if (!/\s/.test(c) && top) top.atField = false
    if (!/\s/.test(c)) pendingName = undefined
    out += c
    i++
  }
  return out
}
