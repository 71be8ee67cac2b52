/**
 * YAML answers as upstream writes them: its serializer turns the JSON form
 * into YAML through go-yaml v2, which reads every object as a map and writes
 * map keys in its own "natural" order (letters by code point, runs of digits
 * by number), lists not indented under their key, and YAML 1.1's quoting
 * (strings such as "yes", "on" or a timestamp are quoted).
 */
import type { ScalarTag, Tags } from 'yaml'
import { parseJsonWalk } from '../machinery/json-slices.js'
import { type Checkpointed, runAtOnce } from '../machinery/time-slice.js'
import { apiObjectJson, apiObjectJsonTextInSteps, listItemJsonTextInSteps } from './api-json.js'
import { GoYamlWriter, type YamlOptions } from './go-yaml-writer.js'

const isLetter = (c: string) => /\p{L}/u.test(c)
const isAsciiLetter = (code: number) => (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a)
const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9'

/** Code units that pair into one code point (a surrogate): strings with none are indexed by unit, not split. */
const SURROGATE = /[\uD800-\uDFFF]/

/** go-yaml v2's order of two string keys (its keyList.Less), as a comparator. */
export function compareYamlKeys(a: string, b: string): number {
  // Most keys differ after a common prefix in two letters: decided there without splitting them into code points.
  let i = 0
  while (i < a.length && i < b.length && a.charCodeAt(i) === b.charCodeAt(i)) i++
  if (i === a.length || i === b.length) {
    if (!SURROGATE.test(a) && !SURROGATE.test(b)) return a.length - b.length
  } else if (isAsciiLetter(a.charCodeAt(i)) && isAsciiLetter(b.charCodeAt(i))) return a.charCodeAt(i) - b.charCodeAt(i)
  return compareYamlKeysByCodePoints(a, b)
}

/** compareYamlKeys the long way, code point by code point, as keyList.Less reads runes. */
export function compareYamlKeysByCodePoints(a: string, b: string): number {
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

/**
 * An API object as upstream's YAML serializer writes it: from its JSON form
 * (so with Go's empty values, and a built-in list's items without kind and
 * apiVersion), keys in go-yaml's order.
 */
export function apiObjectYaml(value: Record<string, unknown>): string {
  return runAtOnce(apiObjectYamlInSteps(value))
}

/**
 * apiObjectYaml as checkpointed work, for an object of megabytes: its JSON
 * form written, read back and written as YAML in steps. A small object
 * reaches no checkpoint.
 */
export function* apiObjectYamlInSteps(value: Record<string, unknown>): Checkpointed<string> {
  const json = yield* apiObjectJsonTextInSteps(value)
  const parsed = yield* parseJsonWalk(json)
  return yield* writer().document(parsed ? parsed.value : JSON.parse(json))
}

/**
 * apiObjectYaml of a list, a checkpoint after each item: each item's JSON
 * form is the list's own for it (a built-in list's items without kind and
 * apiVersion), written and read back in steps.
 */
export function* apiListYamlInSteps(list: Record<string, unknown>): Checkpointed<string> {
  const items = list['items']
  if (!Array.isArray(items) || items.length === 0) return yield* apiObjectYamlInSteps(list)
  const frame = JSON.parse(apiObjectJson({ ...list, items: [] })) as Record<string, unknown>
  const jsonItems: unknown[] = []
  for (const item of items) {
    yield
    const text = yield* listItemJsonTextInSteps(list, item)
    const parsed = yield* parseJsonWalk(text)
    jsonItems.push(parsed ? parsed.value : JSON.parse(text))
  }
  frame['items'] = jsonItems
  return yield* writer().document(frame)
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

/** The yaml package's options for go-yaml v2's layout (exported for the writer's tests). */
export const GO_YAML_OPTIONS: YamlOptions = { version: '1.1', indentSeq: false, customTags: withGoYamlFloats }

let shared: GoYamlWriter | undefined
/** The writer, made at first use: making it writes a document to learn the yaml package's context. */
function writer(): GoYamlWriter {
  return (shared ??= new GoYamlWriter(GO_YAML_OPTIONS, compareYamlKeys))
}
