/**
 * YAML answers as upstream writes them: its serializer turns the JSON form
 * into YAML through go-yaml v2, which reads every object as a map and writes
 * map keys in its own "natural" order (letters by code point, runs of digits
 * by number), lists not indented under their key, and YAML 1.1's quoting
 * (strings such as "yes", "on" or a timestamp are quoted).
 */
import { type ScalarTag, stringify, type Tags } from 'yaml'
import type { Checkpointed } from '../machinery/time-slice.js'
import { apiObjectJson } from './api-json.js'

const isLetter = (c: string) => /\p{L}/u.test(c)
const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9'

/** go-yaml v2's order of two string keys (its keyList.Less), as a comparator. */
export function compareYamlKeys(a: string, b: string): number {
  const ar = [...a]
  const br = [...b]
  for (let i = 0; i < ar.length && i < br.length; i++) {
    const x = ar[i]!
    const y = br[i]!
    if (x === y) continue
    const xl = isLetter(x)
    const yl = isLetter(y)
    if (xl && yl) return x.codePointAt(0)! - y.codePointAt(0)!
    if (xl || yl) return xl ? 1 : -1
    // Digits (and other non-letters): compare the numbers the digit runs spell.
    let xn = 0
    let yn = 0
    if (x === '0' || y === '0') {
      for (let j = i - 1; j >= 0 && isDigit(ar[j]); j--) {
        if (ar[j] !== '0') {
          xn = 1
          yn = 1
          break
        }
      }
    }
    let xi = i
    let yi = i
    for (; isDigit(ar[xi]); xi++) xn = xn * 10 + Number(ar[xi])
    for (; isDigit(br[yi]); yi++) yn = yn * 10 + Number(br[yi])
    if (xn !== yn) return xn - yn
    if (xi !== yi) return xi - yi
    return x.codePointAt(0)! - y.codePointAt(0)!
  }
  return ar.length - br.length
}

function sortedCopy(v: unknown): unknown {
  if (Array.isArray(v)) return v.map((item: unknown) => sortedCopy(item ?? null))
  if (typeof v !== 'object' || v === null) return v
  const obj = v as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const k of Object.keys(obj).sort(compareYamlKeys)) if (obj[k] !== undefined) out[k] = sortedCopy(obj[k])
  return out
}

/**
 * An API object as upstream's YAML serializer writes it: from its JSON form
 * (so with Go's empty values, and a built-in list's items without kind and
 * apiVersion), keys in go-yaml's order.
 */
export function apiObjectYaml(value: Record<string, unknown>): string {
  const copy = sortedCopy(JSON.parse(apiObjectJson(value))) as Record<string, unknown>
  return stringify(copy, YAML_OPTIONS)
}

/**
 * apiObjectYaml of a list, a checkpoint after each item: a list of
 * thousands written at once held the thread half a second and more. Each
 * item is written alone in a sequence of its own, which places it as the
 * list's `items` does (go-yaml's sequences are not indented under their
 * key), and its text takes the place of `items: []` in the list's frame.
 */
export function* apiListYamlInSteps(list: Record<string, unknown>): Checkpointed<string> {
  const items = list['items']
  if (!Array.isArray(items) || items.length === 0) return apiObjectYaml(list)
  const frame = stringify(sortedCopy(JSON.parse(apiObjectJson({ ...list, items: [] }))), YAML_OPTIONS)
  const texts: string[] = []
  for (const item of items) {
    yield
    // The item's JSON form as its list writes it (a built-in list's items without kind and apiVersion).
    const one = JSON.parse(apiObjectJson({ ...list, items: [item] })) as { items: unknown[] }
    texts.push(stringify([sortedCopy(one.items[0] ?? null)], YAML_OPTIONS))
  }
  // The frame's only line at the left margin that opens `items` (the object's own fields are indented).
  return frame.replace(/^items: \[\]$/m, () => `items:\n${texts.join('').slice(0, -1)}`)
}

/** The YAML 1.1 library's pattern for floats with a point, which also takes `.` and `-.` alone. */
const YAML11_POINT_FLOAT = String(/^[-+]?(?:[0-9][0-9_]*)?\.[0-9_]*$/)
/**
 * go-yaml v2's (`[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)`, underscores dropped first):
 * a point needs a digit beside it, so FieldsV1's `.` key stays plain (`.: {}`).
 */
const GO_YAML_POINT_FLOAT = /^[-+]?(?:\.[0-9_]*[0-9][0-9_]*|[0-9][0-9_]*(?:\.[0-9_]*)?)$/

function withGoYamlFloats(tags: Tags): Tags {
  return tags.map((tag) => (typeof tag === 'object' && !('collection' in tag && tag.collection) && String(tag.test) === YAML11_POINT_FLOAT ? { ...(tag as ScalarTag), test: GO_YAML_POINT_FLOAT } : tag))
}

const YAML_OPTIONS = { version: '1.1', indentSeq: false, customTags: withGoYamlFloats } as const
