/**
 * The value transformer stage between the stored-object codec and a
 * backend (upstream's value.Transformer): asynchronous, because AES-GCM in
 * Web Crypto and KMS are; given the object's key as authenticated data, so
 * that a value copied to another key does not read; and answering `stale`
 * when a value was read with something other than the current write
 * transformer (an old key), so that the next read-modify-write rewrites it.
 */

/** What a transformation is bound to: the object's storage key (upstream's DefaultContext(key)). */
export interface DataContext {
  readonly authenticatedData: Uint8Array
}

const encoder = new TextEncoder()

export function keyContext(key: string): DataContext {
  return { authenticatedData: encoder.encode(key) }
}

export interface FromStorage {
  bytes: Uint8Array
  /** The value should be written again with the current transformer. */
  stale: boolean
}

export interface ValueTransformer {
  /** The bytes to store for the codec's bytes. May differ on each call (a fresh nonce). */
  toStorage(bytes: Uint8Array, context: DataContext): Promise<Uint8Array>
  /** The codec's bytes of a stored value; throws when the value cannot be read. */
  fromStorage(bytes: Uint8Array, context: DataContext): Promise<FromStorage>
  /**
   * True when what it stores is the codec's bytes themselves and nothing it
   * reads is stale: a backend may then compare stored bytes with the codec's
   * without reading them back.
   */
  readonly storesCodecBytes?: boolean
}

/** Values stored as the codec writes them: what every backend does until encryption at rest is configured. */
export const identityTransformer: ValueTransformer = {
  toStorage: async (bytes) => bytes,
  fromStorage: async (bytes) => ({ bytes, stale: false }),
  storesCodecBytes: true,
}

const ENCRYPTED_MARK = encoder.encode('k8s:enc:')

/** Whether stored bytes carry the mark upstream puts in front of every encrypted value. */
export function isMarkedEncrypted(bytes: Uint8Array): boolean {
  return bytes.length >= ENCRYPTED_MARK.length && ENCRYPTED_MARK.every((b, i) => bytes[i] === b)
}

/**
 * Values stored as they are, refusing one marked as encrypted (upstream's
 * identity provider and its default for resources without encryption): a
 * value whose key was removed from the configuration reads as an error,
 * never as ciphertext taken for an object.
 */
export const encryptCheckTransformer: ValueTransformer = {
  toStorage: async (bytes) => bytes,
  fromStorage: async (bytes) => {
    if (isMarkedEncrypted(bytes)) throw new Error('identity transformer tried to read encrypted data')
    return { bytes, stale: false }
  },
  storesCodecBytes: true,
}
