/**
 * API objects as upstream's JSON serializer writes them: Go's field order
 * and escapes (go-json.ts, json-shapes.ts) and the newline json.Encoder
 * ends every value with. Objects, lists, tables, Status and discovery
 * documents all leave the server through here; each watch event is one such
 * line. An object already in canonical order (canonical.ts) is handed to
 * the engine's JSON.stringify, the rest are written along their shape.
 */
import { isCanonical } from './canonical.js'
import { escapeLikeGo, marshalGo, marshalGoUnescaped, type Shape } from './go-json.js'
import { shapeOfObject, STATUS_SHAPE, VERSION_INFO_SHAPE } from './json-shapes.js'

function unescapedJson(value: unknown, shape: Shape): string {
  return isCanonical(value, shape) ? (JSON.stringify(value) ?? 'null') : marshalGoUnescaped(value, shape, shapeOfObject)
}

/** An API object (its shape found from its apiVersion and kind) as one line of JSON. */
export function apiObjectJson(value: Record<string, unknown>): string {
  return `${escapeLikeGo(unescapedJson(value, shapeOfObject(value)))}\n`
}

/** A metav1.Status as one line of JSON, whatever its kind field says. */
export function statusJson(status: object): string {
  return `${escapeLikeGo(unescapedJson(status, STATUS_SHAPE))}\n`
}

/** One watch event: `{"type":...,"object":...}` (metav1.WatchEvent's order) and a newline. */
export function watchEventJson(type: string, object: unknown): string {
  const body = typeof object === 'object' && object !== null && !Array.isArray(object) ? unescapedJson(object, shapeOfObject(object as Record<string, unknown>)) : JSON.stringify(object)
  return `${escapeLikeGo(`{"type":${JSON.stringify(type)},"object":${body}}`)}\n`
}

/** /version's document, compact (respond.ts indents it as upstream's WriteRawJSON does). */
export function versionInfoJson(info: object): string {
  return marshalGo(info, VERSION_INFO_SHAPE)
}
