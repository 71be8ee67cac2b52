/**
 * How objects become bytes in a persistent backend (`--storage-media-type`).
 * The memory store keeps objects as they are; the embedded store and etcd
 * keep what this codec writes, so a value read back from etcd by another
 * tool is plain JSON (or YAML) exactly as upstream stores it with that
 * media type. Encryption at rest wraps these bytes later (a transformer).
 */
import { parse as parseYaml, stringify as toYaml } from 'yaml'
import type { KubeObject } from '../resources/object.js'

export interface ObjectCodec {
  readonly mediaType: string
  encode(obj: KubeObject): Uint8Array
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

export const jsonCodec: ObjectCodec = {
  mediaType: 'application/json',
  encode: (obj) => encoder.encode(JSON.stringify(withoutResourceVersion(obj))),
  decode: (bytes) => JSON.parse(decoder.decode(bytes)) as KubeObject,
}

export const yamlCodec: ObjectCodec = {
  mediaType: 'application/yaml',
  encode: (obj) => encoder.encode(toYaml(withoutResourceVersion(obj))),
  decode: (bytes) => parseYaml(decoder.decode(bytes)) as KubeObject,
}

/** Thrown for a media type no codec exists for yet; the daemon reports it at start-up. */
export class UnsupportedMediaTypeError extends Error {}

export function codecFor(mediaType: string): ObjectCodec {
  if (mediaType === 'application/json') return jsonCodec
  if (mediaType === 'application/yaml') return yamlCodec
  if (mediaType === 'application/vnd.kubernetes.protobuf') {
    throw new UnsupportedMediaTypeError(
      `--storage-media-type=${mediaType}: storing objects as protobuf is not supported yet; use application/json or application/yaml`,
    )
  }
  throw new UnsupportedMediaTypeError(`--storage-media-type=${mediaType}: supported values are application/json and application/yaml`)
}
