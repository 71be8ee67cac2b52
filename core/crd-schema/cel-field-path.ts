/**
 * The `fieldPath` of a validation rule: a JSON path from the rule's node
 * to the field a failure is reported on, made of `.name` steps and
 * `['quoted name']` steps (property names or map keys, no list indexes),
 * each of which must exist in the schema. Upstream: ValidFieldPath in
 * apiextensions-apiserver schema/cel/validation.go.
 */
import type { CelSchemaProps } from './cel-schema.js'

/** The steps of a path between delimiters; a quoted step keeps its quotes. */
function tokens(path: string): string[] {
  const out: string[] = []
  let i = 0
  while (i < path.length) {
    const c = path[i] ?? ''
    if (c === '.' || c === '[' || c === ']') {
      out.push(c)
      i++
      continue
    }
    let end = i
    if (c === "'") {
      end = i + 1
      while (end < path.length && !(path[end] === "'" && path[end - 1] !== '\\')) end++
      end = Math.min(end + 1, path.length)
    } else {
      while (end < path.length && !'.[]'.includes(path[end] ?? '')) end++
    }
    out.push(path.slice(i, end))
    i = end
  }
  return out
}

const ESCAPES: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', "'": "'", '\\': '\\' }

function unquote(token: string): string {
  let bad = ''
  const text = token.slice(1, -1).replace(/\\./g, (m) => {
    const replacement = ESCAPES[m[1] ?? '']
    if (replacement === undefined) bad ||= m
    return replacement ?? ''
  })
  if (bad) throw new Error(`invalid string literal: invalid escape char ${bad}`)
  return text
}

/**
 * Follows `path` through `schema`; returns the normalized path text the
 * error is reported under (`spec.x[key]`, appended to the rule's path), or
 * the reason the path is not valid.
 */
export function resolveFieldPath(path: string, schema: CelSchemaProps): { path: string } | { error: string } {
  let node: CelSchemaProps | undefined = schema
  let text = ''
  const step = (name: string): string | undefined => {
    if (!node) return 'does not refer to a valid field'
    if (node.properties) {
      text = text ? `${text}.${name}` : name
      node = node.properties[name]
      return node ? undefined : 'does not refer to a valid field'
    }
    if (typeof node.additionalProperties === 'object') {
      text = `${text}[${name}]`
      node = node.additionalProperties
      return undefined
    }
    return 'does not refer to a valid field'
  }
  const list = tokens(path)
  try {
    for (let i = 0; i < list.length; i++) {
      const token = list[i]
      let problem: string | undefined
      if (token === '[') {
        const quoted = list[++i]
        if (quoted === undefined) return { error: 'unexpected end of JSON path' }
        if (quoted.length < 2 || !quoted.startsWith("'") || !quoted.endsWith("'")) {
          return { error: `expected single quoted string but got ${quoted}` }
        }
        problem = step(unquote(quoted))
        const close = list[++i]
        if (!problem && close === undefined) return { error: 'unexpected end of JSON path' }
        if (!problem && close !== ']') return { error: `expected ] but got ${close}` }
      } else if (token === '.') {
        const name = list[++i]
        if (name === undefined) return { error: 'unexpected end of JSON path' }
        problem = step(name)
      } else {
        return { error: `expected [ or . but got: ${token}` }
      }
      if (problem) return { error: problem }
    }
  } catch (err) {
    return { error: (err as Error).message }
  }
  return { path: text }
}
