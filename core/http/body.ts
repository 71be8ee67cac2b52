/**
 * Reading request bodies: the size limit (413), then decoding by
 * Content-Type into plain JSON data (JSON, YAML, protobuf), or 415.
 */
import { BODY_TYPES, essence, JSON_TYPE, PROTOBUF_TYPE, YAML_TYPE } from './media-types.js'
import { duplicateJsonFields, duplicateJsonFieldsWalk } from './duplicate-fields.js'
import { overflowingNumber, parseJsonWalk } from '../machinery/json-slices.js'
import { isPlainObject } from '../machinery/object.js'
import { goJsonSyntaxError } from '../machinery/go-json-check.js'
import { depthMessage, depthWalk, JsonDepthScanner, jsonDepthMessage, jsonTooDeepAt, jsonTooDeepWalk, nestsDeeperThan } from '../machinery/limits.js'
import { runInSlices, TimeSlice } from '../machinery/time-slice.js'
import { decodeProtobuf, decodeProtobufInSteps, PROTOBUF_MAGIC } from '../encoding/protobuf.js'
import { decodeYaml, YamlBodyError, YamlNotJsonError } from './yaml-body.js'
import { decodeYamlOffThread, goesOffThread, type YamlDecoder } from './yaml-off-thread.js'
import { badRequest, requestEntityTooLarge, type StatusError, unsupportedMediaType } from '../machinery/status-error.js'

/** Bodies of up to this many bytes are read in one piece: copying them takes well under a slice. */
const WHOLE_BODY_UP_TO = 256 * 1024

/** Looks at each part of a body as it arrives; throws (a StatusError) to refuse the body without reading the rest. */
export type BodyCheck = (chunk: Uint8Array) => void

/**
 * For a JSON body: refuses one nested past MAX_NESTING_DEPTH as soon as the
 * bytes read show it, with the words the decoder would use after `prefix`.
 */
export function jsonDepthCheck(prefix: string): BodyCheck {
  const scanner = new JsonDepthScanner()
  return (chunk) => {
    const tooDeep = scanner.feed(chunk)
    if (tooDeep) throw badRequest(`${prefix}${jsonDepthMessage(tooDeep)}`)
  }
}

/** Reads the whole body, refusing more than `limit` bytes without buffering past it, and what `check` refuses. */
export async function readBodyBytes(request: Request, limit: number, check?: BodyCheck): Promise<Uint8Array> {
  const declared = Number(request.headers.get('content-length') ?? '')
  if (Number.isFinite(declared) && declared > limit) throw requestEntityTooLarge(limit)
  // A small declared length bounds the body (HTTP parsers stop there): read it whole. The Node
  // adapter then reads the socket's chunks directly, without building a ReadableStream, but joins
  // and copies them in one piece: a body of megabytes is read by chunks below and joined in slices.
  if (request.headers.has('content-length') && Number.isFinite(declared) && declared <= WHOLE_BODY_UP_TO) {
    const whole = new Uint8Array(await request.arrayBuffer())
    // A Request built in-process may declare less than it holds.
    if (whole.byteLength > limit) throw requestEntityTooLarge(limit)
    check?.(whole)
    return whole
  }
  if (!request.body) return new Uint8Array()
  const chunks: Uint8Array[] = []
  let total = 0
  const reader = request.body.getReader()
  // Each chunk read lets the runtime read the next from the socket at once (Node reads up to 2 MiB
  // from one socket in one turn, and decrypts it): once the slice is spent, other requests go first.
  // A small body is read without a pause: a new request may find the thread's slice spent already.
  const slice = new TimeSlice()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    total += value.byteLength
    try {
      if (total > limit) throw requestEntityTooLarge(limit)
      check?.(value)
    } catch (err) {
      await reader.cancel().catch(() => {})
      throw err
    }
    chunks.push(value)
    if (total > WHOLE_BODY_UP_TO) await slice.pause()
  }
  if (chunks.length === 1) return chunks[0] ?? new Uint8Array()
  // Megabytes of copying add up to a few milliseconds: other requests run between the chunks.
  const out = new Uint8Array(total)
  let offset = 0
  for (const c of chunks) {
    out.set(c, offset)
    offset += c.byteLength
    await slice.pause()
  }
  return out
}

/**
 * A leading byte order mark is kept: upstream's JSON decoder refuses it as
 * an invalid character (400), where TextDecoder would drop it unseen; the
 * YAML parser skips it, as upstream's does.
 */
const decoder = new TextDecoder('utf-8', { ignoreBOM: true })
const BYTE_ORDER_MARK = 0xfeff

/**
 * How many bytes are decoded at a time: well under a slice even for text of
 * two- and three-byte characters, which decodes ten times slower than ASCII.
 */
const DECODE_STEP = 32 * 1024

/**
 * UTF-8 bytes to text as TextDecoder reads them (a leading BOM kept,
 * invalid bytes replaced), a large body in steps with other requests served
 * between them: a character cut at a step's end is completed by the next.
 */
export async function decodeUtf8(bytes: Uint8Array): Promise<string> {
  if (bytes.byteLength <= DECODE_STEP) return decoder.decode(bytes)
  const slice = new TimeSlice()
  const streaming = new TextDecoder('utf-8', { ignoreBOM: true })
  const parts: string[] = []
  for (let at = 0; at < bytes.byteLength; at += DECODE_STEP) {
    parts.push(streaming.decode(bytes.subarray(at, at + DECODE_STEP), { stream: true }))
    await slice.pause()
  }
  parts.push(streaming.decode())
  return parts.join('')
}

/**
 * JSON.parse behind a depth check: V8 parses any depth, but the walks that
 * follow recurse, so a text nested past MAX_NESTING_DEPTH is refused first.
 * `prefix` is the decoder's words upstream puts before the parser's error.
 */
export function parseJsonWithin(text: string, prefix: string): unknown {
  const tooDeep = jsonTooDeepAt(text)
  if (tooDeep) throw badRequest(`${prefix}${jsonDepthMessage(tooDeep)}`)
  return parseJson(text, prefix)
}

/**
 * JSON.parse of a text whose depth was checked already, its error as a 400
 * in upstream's words. A number float64 cannot hold is refused here too: it
 * would be Infinity, stored as null. The sliced parser leaves such a text to
 * this one, so that every JSON body is checked in this one place.
 */
function parseJson(text: string, prefix: string): unknown {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    // Go's scanner names one character; V8's message quotes the text around the error (all of a short
    // body), which would carry a Secret's values into the answer, the logs and a Metadata-level audit event.
    throw badRequest(`${prefix}${goJsonSyntaxError(new TextEncoder().encode(text)) ?? 'unexpected end of JSON input'}`)
  }
  const overflowing = overflowingNumber(text)
  if (overflowing !== undefined) throw badRequest(numberOverflowMessage(value, overflowing, prefix))
  return wellFormedStrings(text, value)
}

/** An escaped UTF-16 surrogate (`\ud800`): the only way a JSON text decoded from UTF-8 holds half of a pair. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/
const SURROGATE = /[\ud800-\udfff]/
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

/**
 * The value with every lone surrogate made U+FFFD, as Go's JSON decoder
 * makes it (JSON.parse keeps it): a name is then one string in the object,
 * in the watch cache and in every store's key (whose UTF-8 bytes would
 * have made it U+FFFD there alone). Walked only when the text escapes one.
 */
function wellFormedStrings(text: string, value: unknown): unknown {
  if (!SURROGATE_ESCAPE.test(text)) return value
  const fix = (s: string): string => (SURROGATE.test(s) ? s.replace(LONE_SURROGATE, '\ufffd') : s)
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return fix(v)
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) v[i] = walk(v[i])
      return v
    }
    if (v === null || typeof v !== 'object') return v
    const object = v as Record<string, unknown>
    const keys = Object.keys(object)
    // Own fields set as JSON.parse sets them (`__proto__` too); when a key changes the object is built again
    // in order, a later key winning as in Go's decoder.
    const out: Record<string, unknown> = keys.some((k) => SURROGATE.test(k)) ? {} : object
    for (const k of keys) Object.defineProperty(out, fix(k), { value: walk(object[k]), writable: true, enumerable: true, configurable: true })
    return out
  }
  return walk(value)
}

/**
 * Go's words for a number beyond float64 in an untyped value (upstream
 * decodes a custom resource into a map, sigs.k8s.io/json's convertNumber),
 * after the "cannot be handled as" its handler puts before a decoding error
 * of the object's kind; `prefix` stands in for a body that names no kind.
 */
function numberOverflowMessage(value: unknown, literal: string, prefix: string): string {
  const error = `json: cannot unmarshal number ${literal} into Go value of type float64`
  const kind = isPlainObject(value) ? value['kind'] : undefined
  const apiVersion = isPlainObject(value) ? value['apiVersion'] : undefined
  if (typeof kind !== 'string' || kind === '' || typeof apiVersion !== 'string') return `${prefix}${error}`
  const version = apiVersion.slice(apiVersion.indexOf('/') + 1)
  return `${kind} in version ${JSON.stringify(version)} cannot be handled as a ${kind}: ${error}`
}

export function parseJsonText(text: string): unknown {
  return parseJsonWithin(text, "couldn't get version/kind; json parse error: ")
}

/** Below this many characters a body is parsed at once: JSON.parse takes well under a slice. */
const SLICED_JSON_FROM = 64 * 1024

/**
 * parseJsonWithin for a body of any size, with its duplicate fields when
 * asked: a large body is checked, built and scanned in time slices
 * (json-slices.ts), so other requests are served meanwhile. A text the
 * sliced parser cannot read goes to JSON.parse for its error, in one piece.
 */
export async function decodeJsonWithin(
  text: string,
  prefix: string,
  findDuplicates: boolean,
  depthChecked = false,
): Promise<{ value: unknown; duplicates: string[] }> {
  // Go's scanner reads the mark's first byte, 0xEF, as the Latin-1 character it quotes.
  if (text.charCodeAt(0) === BYTE_ORDER_MARK) throw badRequest(`${prefix}invalid character 'ï' looking for beginning of value`)
  // A body's bytes may have been checked as they arrived (jsonDepthCheck): no second pass then.
  if (text.length < SLICED_JSON_FROM) {
    return { value: depthChecked ? parseJson(text, prefix) : parseJsonWithin(text, prefix), duplicates: findDuplicates ? duplicateJsonFields(text) : [] }
  }
  const slice = new TimeSlice()
  const tooDeep = depthChecked ? undefined : await runInSlices(jsonTooDeepWalk(text), slice)
  if (tooDeep) throw badRequest(`${prefix}${jsonDepthMessage(tooDeep)}`)
  const parsed = await runInSlices(parseJsonWalk(text), slice)
  const value = parsed ? wellFormedStrings(text, parsed.value) : parseJsonWithin(text, prefix)
  return { value, duplicates: findDuplicates ? await runInSlices(duplicateJsonFieldsWalk(text), slice) : [] }
}

/**
 * One YAML document to data, or 400 in upstream's words; its duplicate keys
 * when asked. A large body goes to `yaml`, the runtime's decoder on another
 * thread, when there is one.
 */
export async function decodeYamlText(text: string, findDuplicates = false, yaml?: YamlDecoder): Promise<{ value: unknown; duplicates: string[] }> {
  try {
    if (yaml && goesOffThread(text, yaml)) return await decodeYamlOffThread(text, findDuplicates, yaml)
    return await decodeYaml(text, findDuplicates)
  } catch (err) {
    if (err instanceof YamlBodyError) throw badRequest(`error converting YAML to JSON: yaml: ${err.message}`)
    if (err instanceof YamlNotJsonError) throw badRequest(`error converting YAML to JSON: ${err.message}`)
    throw err
  }
}

/**
 * Decodes an object body (create, update, delete options) by its
 * Content-Type. With `findDuplicates`, also names the fields a JSON or YAML
 * body holds twice (`duplicate field "spec.replicas"`, or the YAML decoder's
 * words) for field validation; protobuf cannot hold a field twice.
 */
export async function decodeObjectBody(
  contentType: string | null,
  bytes: Uint8Array,
  findDuplicates: boolean,
  yaml?: YamlDecoder,
  depthChecked = false,
  expectedKind?: string,
): Promise<{ body: unknown; duplicates: string[] }> {
  const type = essence(contentType)
  if (type === PROTOBUF_TYPE) {
    if (expectedKind !== undefined && !PROTOBUF_MAGIC.every((b, i) => bytes[i] === b)) throw notProtobuf(expectedKind, bytes)
    // A body of megabytes is read in slices, as a JSON body is.
    const sliced = bytes.length >= SLICED_JSON_FROM
    const slice = new TimeSlice()
    const body = sliced ? await runInSlices(decodeProtobufInSteps(bytes), slice) : decodeProtobuf(bytes)
    // Recursive types (JSON schemas) and embedded raw JSON can nest as deeply as the bytes allow.
    const tooDeep = sliced ? await runInSlices(depthWalk(body), slice) : nestsDeeperThan(body)
    if (tooDeep) throw badRequest(`unable to decode protobuf body: ${depthMessage()}`)
    return { body, duplicates: [] }
  }
  if (type !== '' && type !== JSON_TYPE && type !== YAML_TYPE) throw unsupportedMediaType(type, BODY_TYPES)
  const text = await decodeUtf8(bytes)
  if (type === YAML_TYPE) {
    const { value, duplicates } = await decodeYamlText(text, findDuplicates, yaml)
    return { body: value, duplicates }
  }
  const { value, duplicates } = await decodeJsonWithin(text, OBJECT_JSON_PREFIX, findDuplicates, depthChecked)
  return { body: value, duplicates }
}

/** The first bytes of a body as upstream's decode errors quote them: text of an object, else hex; `<empty>` for none. */
function summarizedBody(bytes: Uint8Array, max = 30): string {
  if (bytes.length === 0) return '<empty>'
  const head = bytes.subarray(0, max)
  const more = bytes.length > max ? ' ...' : ''
  if (bytes[0] === 0x7b) return `${new TextDecoder().decode(head)}${more}`
  return `${Array.from(head, (b) => b.toString(16).padStart(2, '0')).join('')}${more}`
}

/** Upstream's 400 for a body sent as protobuf that lacks the protobuf prefix, naming the kind it was to be. */
function notProtobuf(kind: string, bytes: Uint8Array): StatusError {
  return badRequest(
    `the object provided is unrecognized (must be of type ${kind}): provided data does not appear to be a protobuf message, expected prefix [${PROTOBUF_MAGIC.join(' ')}] (${summarizedBody(bytes)})`,
  )
}

/** What upstream's decoder puts before a JSON error in an object body. */
const OBJECT_JSON_PREFIX = "couldn't get version/kind; json parse error: "

/**
 * Reads an object body (create, update) and decodes it by its Content-Type
 * (decodeObjectBody); a JSON body nested too deeply is refused from its first
 * bytes, without reading the rest.
 */
export async function readAndDecodeObjectBody(
  request: Request,
  limit: number,
  findDuplicates: boolean,
  yaml?: YamlDecoder,
  expectedKind?: string,
): Promise<{ body: unknown; duplicates: string[] }> {
  const contentType = request.headers.get('content-type')
  const type = essence(contentType)
  const json = type === '' || type === JSON_TYPE
  const bytes = await readBodyBytes(request, limit, json ? jsonDepthCheck(OBJECT_JSON_PREFIX) : undefined)
  return decodeObjectBody(contentType, bytes, findDuplicates, yaml, json, expectedKind)
}

/** Decodes an object body by its Content-Type. */
export async function decodeBody(contentType: string | null, bytes: Uint8Array, yaml?: YamlDecoder): Promise<unknown> {
  return (await decodeObjectBody(contentType, bytes, false, yaml)).body
}
