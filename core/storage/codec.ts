/**
 * How objects become bytes in a persistent backend (`--storage-media-type`).
 * The memory store keeps objects as they are; the embedded store and etcd
 * keep what this codec writes, in upstream's formats: JSON, YAML, or the
 * protobuf envelope (`k8s\0` + runtime.Unknown) that upstream writes by
 * default. Kinds without a protobuf form (custom resources) are stored as
 * JSON whatever the media type, as upstream does.
 *
 * Reading never trusts the configured type: the stored bytes say what they
 * are (the protobuf prefix, a JSON brace, else YAML), so a store written with
 * one media type stays readable after the flag changes, as upstream's
 * decoder recognises every serialization. Encryption at rest wraps these
 * bytes later (a transformer).
 */
import { parse as parseYaml, stringify as toYaml } from 'yaml'
import { decodeProtobuf, encodeProtobuf, encodeProtobufInSteps, PROTOBUF_MAGIC } from '../encoding/protobuf.js'
import type { Checkpointed } from '../machinery/time-slice.js'
import { hasStatusCode } from '../machinery/status-error.js'
import type { KubeObject } from '../machinery/object.js'

export interface ObjectCodec {
  readonly mediaType: StorageMediaType
  encode(obj: KubeObject): Uint8Array
  /** The same bytes as checkpointed work, for an object of megabytes; a codec without it encodes those at once too. */
  encodeInSteps?(obj: KubeObject): Checkpointed<Uint8Array>
  decode(bytes: Uint8Array): KubeObject
}

export const STORAGE_MEDIA_TYPES = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'] as const
export type StorageMediaType = (typeof STORAGE_MEDIA_TYPES)[number]

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** Stored objects never carry a resourceVersion: the store's revision is the truth. */
function withoutResourceVersion(obj: KubeObject): KubeObject {
  if (obj.metadata?.resourceVersion === undefined) return obj
  const { resourceVersion: _dropped, ...metadata } = obj.metadata
  return { ...obj, metadata }
}

function startsWithMagic(bytes: Uint8Array): boolean {
  return PROTOBUF_MAGIC.every((b, i) => bytes[i] === b)
}

/** The first byte that is not JSON whitespace. */
function firstSignificantByte(bytes: Uint8Array): number | undefined {
  for (const b of bytes) if (b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09) return b
  return undefined
}

/** Reads bytes written by any of the codecs below. */
export function decodeStoredObject(bytes: Uint8Array): KubeObject {
  if (startsWithMagic(bytes)) return decodeProtobuf(bytes) as KubeObject
  const text = decoder.decode(bytes)
  return (firstSignificantByte(bytes) === 0x7b ? JSON.parse(text) : parseYaml(text)) as KubeObject
}

const encodeJson = (obj: KubeObject): Uint8Array => encoder.encode(JSON.stringify(withoutResourceVersion(obj)))

export const jsonCodec: ObjectCodec = {
  mediaType: 'application/json',
  encode: encodeJson,
  decode: decodeStoredObject,
}

export const yamlCodec: ObjectCodec = {
  mediaType: 'application/yaml',
  encode: (obj) => encoder.encode(toYaml(withoutResourceVersion(obj))),
  decode: decodeStoredObject,
}

export const protobufCodec: ObjectCodec = {
  mediaType: 'application/vnd.kubernetes.protobuf',
  encode: (obj) => {
    try {
      return encodeProtobuf(withoutResourceVersion(obj))
    } catch (err) {
      // 406 from the wire codec: this kind has no protobuf type.
      if (hasStatusCode(err, 406)) return encodeJson(obj)
      throw err
    }
  },
  *encodeInSteps(obj) {
    try {
      return yield* encodeProtobufInSteps(withoutResourceVersion(obj))
    } catch (err) {
      if (hasStatusCode(err, 406)) return encodeJson(obj)
      throw err
    }
  },
  decode: decodeStoredObject,
}

/** Thrown for a media type that is not a storage media type; the daemon reports it at start-up. */
export class UnsupportedMediaTypeError extends Error {}

export function codecFor(mediaType: string): ObjectCodec {
  switch (mediaType) {
    case 'application/json':
      return jsonCodec
    case 'application/yaml':
      return yamlCodec
    case 'application/vnd.kubernetes.protobuf':
      return protobufCodec
  }
  throw new UnsupportedMediaTypeError(
    `--storage-media-type=${mediaType}: supported values are ${STORAGE_MEDIA_TYPES.join(', ')}`,
  )
}
