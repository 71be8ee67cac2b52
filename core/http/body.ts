/**
 * Reading request bodies: the size limit (413), then decoding by
 * Content-Type into plain JSON data (JSON, YAML, protobuf), or 415.
 */
import { parse as parseYaml } from 'yaml'
import { BODY_TYPES, essence, JSON_TYPE, PROTOBUF_TYPE, YAML_TYPE } from './media-types.js'
import { duplicateJsonFields, duplicateYamlKeys } from './duplicate-fields.js'
import { decodeProtobuf } from './protobuf.js'
import { badRequest, requestEntityTooLarge, unsupportedMediaType } from './status-error.js'

/** Reads the whole body, refusing more than `limit` bytes without buffering past it. */
export async function readBodyBytes(request: Request, limit: number): Promise<Uint8Array> {
  const declared = Number(request.headers.get('content-length') ?? '')
  if (Number.isFinite(declared) && declared > limit) throw requestEntityTooLarge(limit)
  if (!request.body) return new Uint8Array()
  const chunks: Uint8Array[] = []
  let total = 0
  const reader = request.body.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    total += value.byteLength
    if (total > limit) {
      await reader.cancel().catch(() => {})
      throw requestEntityTooLarge(limit)
    }
    chunks.push(value)
  }
  if (chunks.length === 1) return chunks[0] ?? new Uint8Array()
  const out = new Uint8Array(total)
  let offset = 0
  for (const c of chunks) {
    out.set(c, offset)
    offset += c.byteLength
  }
  return out
}

const decoder = new TextDecoder()

export function parseJsonText(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch (err) {
    throw badRequest(`couldn't get version/kind; json parse error: ${(err as Error).message}`)
  }
}

export function parseYamlText(text: string): unknown {
  try {
    // One document only, as upstream's YAML serializer; numbers beyond 2^53 stay strings-free.
    // Duplicate keys are field validation's to report (duplicate-fields.ts): here the last one wins, as upstream's decoder has it.
    return parseYaml(text, { uniqueKeys: false, merge: false })
  } catch (err) {
    throw badRequest(`error converting YAML to JSON: yaml: ${(err as Error).message}`)
  }
}

/**
 * Decodes an object body (create, update, delete options) by its
 * Content-Type. With `findDuplicates`, also names the fields a JSON or YAML
 * body holds twice (`duplicate field "spec.replicas"`, or the YAML decoder's
 * words) for field validation; protobuf cannot hold a field twice.
 */
export function decodeObjectBody(contentType: string | null, bytes: Uint8Array, findDuplicates: boolean): { body: unknown; duplicates: string[] } {
  const type = essence(contentType)
  if (type === PROTOBUF_TYPE) return { body: decodeProtobuf(bytes), duplicates: [] }
  if (type !== '' && type !== JSON_TYPE && type !== YAML_TYPE) throw unsupportedMediaType(type, BODY_TYPES)
  const text = decoder.decode(bytes)
  if (type === YAML_TYPE) return { body: parseYamlText(text), duplicates: findDuplicates ? duplicateYamlKeys(text) : [] }
  return { body: parseJsonText(text), duplicates: findDuplicates ? duplicateJsonFields(text) : [] }
}

/** Decodes an object body by its Content-Type. */
export function decodeBody(contentType: string | null, bytes: Uint8Array): unknown {
  return decodeObjectBody(contentType, bytes, false).body
}
