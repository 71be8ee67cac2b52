/**
 * Writing API objects and Status errors in the negotiated encoding. JSON is
 * written as upstream's serializer writes it (core/encoding/api-json.ts):
 * Go's field order and escapes, and a final newline; YAML likewise
 * (core/encoding/go-yaml.ts).
 */
import { apiListJsonByteChunks, apiObjectJsonBytes, apiObjectJsonBytesInSteps, largeListItemsInSteps, LIST_CHUNK_BYTES, statusJson, versionInfoJson } from '../encoding/api-json.js'
import { escapeLikeGo, indentGo } from '../encoding/go-json.js'
import { EncodingMemo, isDeepFrozen } from '../encoding/immutable.js'
import { apiListYamlInSteps, apiObjectYaml, apiObjectYamlInSteps } from '../encoding/go-yaml.js'
import { JSON_TYPE, negotiateErrorEncoding, type OutputFormat, PROTOBUF_TYPE, YAML_TYPE } from './media-types.js'
import { encodeProtobuf, encodeProtobufInSteps } from '../encoding/protobuf.js'
import { joinedBytes } from '../machinery/joined-bytes.js'
import { isMarkedLarge } from '../machinery/large-objects.js'
import { jsonTextInSteps } from '../machinery/json-text.js'
import { type Checkpointed, runInSlices, STEP_BUDGET_MS, TimeSlice, yieldToEventLoop } from '../machinery/time-slice.js'
import type { StatusError } from '../machinery/status-error.js'
import { observableStream } from './observed-body.js'
import { withKnownSize, withSize } from './response-size.js'
import { bytesResponse } from './bytes-response.js'

const utf8 = new TextEncoder()

/** An API object (object, list, Table, Status, discovery document) as JSON; `headers` named in lower case. */
export function jsonResponse(body: Record<string, unknown>, status = 200, headers?: Record<string, string>): Response {
  return jsonBytesResponse(apiObjectJsonBytes(body), status, headers)
}

function jsonBytesResponse(bytes: Uint8Array, status = 200, headers?: Record<string, string>): Response {
  // Bytes in hand, their size kept beside the answer: the filters that wait for an answer to be sent
  // (in-flight seats, sizes) take it as sent once the handler returns, without reading the body, and the
  // Node adapter writes the bytes at once (a stream body would cost a ReadableStream, a reader and a
  // Response of the runtime's for every answer). No Content-Length header: filters that rewrite the body
  // (pretty) would keep it, as Hono carries a response's headers over to its replacement; the adapters count the bytes.
  return withSize(bytesResponse(bytes, status, { 'content-type': JSON_TYPE, ...headers }), bytes.byteLength)
}

/**
 * A document that is no API object (OpenAPI), written with json.Marshal:
 * Go's escapes, no newline. Its bytes are made once per document.
 */
export function documentResponse(doc: object, headers: Record<string, string> = {}): Response {
  return sizedResponse(documentBytes(doc), { headers: { 'content-type': JSON_TYPE, ...headers } })
}

const documentsBytes = new WeakMap<object, Uint8Array>()

function documentBytes(doc: object): Uint8Array {
  let bytes = documentsBytes.get(doc)
  if (bytes === undefined) {
    bytes = utf8.encode(escapeLikeGo(JSON.stringify(doc)))
    documentsBytes.set(doc, bytes)
  }
  return bytes
}

/** The bytes of documents being written in slices, shared by the requests that ask meanwhile. */
const documentsBytesMade = new WeakMap<object, Promise<Uint8Array>>()

/**
 * documentResponse for a document of megabytes (the OpenAPI v2 document with
 * custom resources' schemas): its JSON written in slices, other requests
 * served between them, once per document.
 */
export async function documentResponseInSlices(doc: object, headers: Record<string, string> = {}): Promise<Response> {
  let bytes: Uint8Array | Promise<Uint8Array> | undefined = documentsBytes.get(doc) ?? documentsBytesMade.get(doc)
  if (bytes === undefined) {
    bytes = runInSlices(jsonTextInSteps(doc)).then((text) => {
      const made = utf8.encode(escapeLikeGo(text ?? 'null'))
      documentsBytes.set(doc, made)
      documentsBytesMade.delete(doc)
      return made
    })
    documentsBytesMade.set(doc, bytes)
  }
  return sizedResponse(await bytes, { headers: { 'content-type': JSON_TYPE, ...headers } })
}

/**
 * An answer of text or bytes in hand that is no API object (a document,
 * /version, /metrics, an indented answer), written as bytes with their size
 * kept, as jsonResponse's. A Response of the text would be watched through
 * stream stages by every filter that waits for an answer to be sent, and
 * sizing the text would walk it on every request.
 */
export function sizedResponse(body: string | Uint8Array, init: { status?: number; headers: Record<string, string> | Headers }): Response {
  const bytes = typeof body === 'string' ? utf8.encode(body) : body
  const headers: Record<string, string> = {}
  // bytesResponse takes header names in lower case (a Headers object gives them so).
  if (init.headers instanceof Headers) init.headers.forEach((value, name) => (headers[name] = value))
  else for (const name in init.headers) headers[name.toLowerCase()] = init.headers[name] as string
  return withKnownSize(bytesResponse(bytes, init.status ?? 200, headers), bytes)
}

/** /version as upstream's WriteRawJSON writes it: indented by two spaces, no newline. */
export function versionResponse(info: object): Response {
  return sizedResponse(indentGo(versionInfoJson(info)), { headers: { 'content-type': JSON_TYPE } })
}

/** Each immutable object's protobuf answer (a Response copies the bytes it is given). */
const protobufAnswers = new EncodingMemo<Uint8Array>()

export function objectResponse(body: Record<string, unknown>, format: OutputFormat, status = 200): Response {
  switch (format.kind) {
    case 'yaml':
      return yamlResponse(apiObjectYamlInSteps(body), status)
    case 'protobuf': {
      const bytes = protobufAnswers.of(body, encodeProtobuf)
      return withKnownSize(bytesResponse(bytes, status, { 'content-type': PROTOBUF_TYPE }), bytes)
    }
    default:
      return jsonResponse(body, status)
  }
}

/** objectResponse for an object of megabytes: its JSON or protobuf written in steps, other requests served between them. */
export async function objectResponseInSteps(body: Record<string, unknown>, format: OutputFormat, status = 200): Promise<Response> {
  if (format.kind === 'protobuf') {
    const bytes = protobufAnswers.kept(body) ?? protobufAnswers.keep(body, await runInSlices(encodeProtobufInSteps(body), TimeSlice.startingNow()))
    return withKnownSize(bytesResponse(bytes, status, { 'content-type': PROTOBUF_TYPE }), bytes)
  }
  if (format.kind !== 'json') return objectResponse(body, format, status)
  return jsonBytesResponse(await runInSlices(apiObjectJsonBytesInSteps(body), TimeSlice.startingNow()), status)
}

/** An error's Status, in the encoding the request's `accept` header negotiates (JSON without one). */
export function statusResponse(err: StatusError, accept?: string | null): Response {
  const { bytes, type } = encodedStatus(err, negotiateErrorEncoding(accept))
  const headers: Record<string, string> = { 'content-type': type }
  // Answers' header names are in lower case (bytesResponse); an error's own are spelled as upstream spells them (Retry-After).
  for (const name in err.headers) headers[name.toLowerCase()] = err.headers[name] as string
  return withKnownSize(bytesResponse(bytes, err.code, headers), bytes)
}

function encodedStatus(err: StatusError, encoding: 'json' | 'yaml' | 'protobuf'): { bytes: Uint8Array; type: string } {
  switch (encoding) {
    case 'yaml':
      return { bytes: utf8.encode(apiObjectYaml({ ...err.toStatus() })), type: YAML_TYPE }
    case 'protobuf':
      return { bytes: encodeProtobuf({ ...err.toStatus() }), type: PROTOBUF_TYPE }
    default:
      return { bytes: utf8.encode(statusJson(err.toStatus())), type: JSON_TYPE }
  }
}

/**
 * What Go's server writes for a request line it cannot parse (a path with a
 * malformed escape): its code's text, as plain text, and the connection closed.
 */
export function badRequestLineResponse(): Response {
  const bytes = utf8.encode('400 Bad Request')
  return withKnownSize(bytesResponse(bytes, 400, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' }), bytes)
}

/**
 * What Go's http.Error writes: the message and a newline as plain text. Upstream's filters refuse
 * so where they answer before any API handler (max-in-flight, priority and fairness, the shutdown's
 * Retry-After), not with a Status.
 */
export function goHttpError(message: string, status: number, headers: Record<string, string> = {}): Response {
  const response = textResponse(`${message}\n`, status)
  for (const name in headers) response.headers.set(name, headers[name] as string)
  return response
}

export function textResponse(text: string, status = 200): Response {
  const bytes = utf8.encode(text)
  return withKnownSize(bytesResponse(bytes, status, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' }), bytes)
}

/** Lists longer than this are written as they are read (apiListJsonByteChunks) when the answer is JSON. */
export const STREAMED_LIST_FROM = 500

/**
 * A list as objectResponse writes it; a long JSON list goes out as a stream
 * pulled a run of items at a time, each pull a task of its own. So does a
 * short list of the watch cache's (deep-frozen) items that runs past
 * LIST_CHUNK_BYTES (objects of a megabyte each): joined and encoded whole,
 * sixty of them held the thread some 150 to 300 ms. A short one under that
 * is answered as bytes in hand, as jsonResponse answers.
 */
export function listResponse(list: Record<string, unknown>, format: OutputFormat): Response {
  const items = list['items']
  if (format.kind === 'yaml' && Array.isArray(items) && (items.length > STREAMED_LIST_FROM || isDeepFrozen(items[0]))) return yamlResponse(apiListYamlInSteps(list), 200)
  if (format.kind !== 'json' || !Array.isArray(items)) return objectResponse(list, format)
  const long = items.length > STREAMED_LIST_FROM
  if (!long && !isDeepFrozen(items[0])) return objectResponse(list, format)
  // Items of megabytes are encoded ahead in steps, at the first pull; a list holding one is streamed.
  let largeItems = items.some(isMarkedLarge)
  // Bytes, not text: an immutable item's bytes are kept, so the list is copied together rather than encoded.
  const chunks = apiListJsonByteChunks(list)
  const held: Uint8Array[] = []
  if (!long && !largeItems) {
    let size = 0
    while (size <= LIST_CHUNK_BYTES) {
      const next = chunks.next()
      if (next.done) return jsonBytesResponse(joinedBytes(held, size))
      held.push(next.value)
      size += next.value.byteLength
    }
  }
  // A reader that takes each run as soon as it is made (a client in the same process; a socket that keeps up)
  // would get the list in one piece: once making runs took STEP_BUDGET_MS since others last had a turn (encoding
  // items, not handing out runs kept from before), the next run is made after they had one.
  let makingMs = 0
  // Observable: the filters that size or time the answer watch its pulls instead of piping it through stages of their own.
  const body = observableStream({
    pull: async () => {
      if (largeItems) {
        largeItems = false
        await runInSlices(largeListItemsInSteps(list), TimeSlice.startingNow())
      }
      const first = held.shift()
      if (first) return first
      if (makingMs >= STEP_BUDGET_MS) {
        makingMs = 0
        await yieldToEventLoop()
      }
      const started = performance.now()
      const next = chunks.next()
      makingMs += performance.now() - started
      return next.done ? undefined : next.value
    },
    cancel: () => void chunks.return(),
  })
  return new Response(body, { status: 200, headers: { 'content-type': JSON_TYPE } })
}

/**
 * YAML written in steps (apiObjectYamlInSteps, apiListYamlInSteps): what
 * ends before its first checkpoint (an object of ordinary size) is answered
 * at once; the rest goes out once whole, other requests served between its
 * steps. Written at once, one ConfigMap of 40,000 keys held the thread
 * 0.3 s, and 3,000 ConfigMaps half a second.
 */
function yamlResponse(work: Checkpointed<string>, status: number): Response {
  const first = work.next()
  if (first.done) return withKnownSize(new Response(first.value, { status, headers: { 'content-type': YAML_TYPE } }), first.value)
  let written = false
  const body = observableStream({
    pull: async () => {
      if (written) return undefined
      written = true
      return utf8.encode(await runInSlices(work, TimeSlice.startingNow()))
    },
    cancel: () => void work.return(''),
  })
  return new Response(body, { status, headers: { 'content-type': YAML_TYPE } })
}
