/**
 * The `aesgcm` and `aescbc` providers' ciphers, through Web Crypto, laid
 * out as upstream's storage/value/encrypt/aes writes them:
 *
 * - aesgcm: a random 12-byte nonce, then the sealed data (ciphertext and
 *   16-byte tag); the object's storage key is the authenticated data, so a
 *   value copied under another key does not open.
 * - aescbc: a random 16-byte IV, then the data padded with PKCS#7 and
 *   encrypted; no authentication (upstream's, kept for compatibility).
 */
import type { DataContext, ValueTransformer } from '../storage/value/transformer.js'

const GCM_NONCE_BYTES = 12
const GCM_TAG_BYTES = 16
const CBC_BLOCK_BYTES = 16

// Upstream's wordings of a value that cannot be read.
const TOO_SHORT = 'the stored data was shorter than the required size'
const NOT_BLOCKS = 'the stored data is not a multiple of the block size'
const BAD_PADDING = 'invalid padding on input'
const GCM_FAILED = 'cipher: message authentication failed'

type AesKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>

/**
 * Checked when the transformer is made, as Go's aes.NewCipher does: a DEK a
 * KMS plugin decrypted to the wrong size is refused then, not kept in a DEK
 * cache that would fail every read of it until evicted.
 */
function importOnce(secret: Uint8Array, algorithm: 'AES-GCM' | 'AES-CBC'): () => Promise<AesKey> {
  if (secret.length !== 16 && secret.length !== 24 && secret.length !== 32) throw new Error(`crypto/aes: invalid key size ${secret.length}`)
  let key: Promise<AesKey> | undefined
  const raw = secret.slice()
  return () => (key ??= crypto.subtle.importKey('raw', raw, { name: algorithm }, false, ['encrypt', 'decrypt']))
}

function randomBytes(n: number): Uint8Array<ArrayBuffer> {
  return crypto.getRandomValues(new Uint8Array(n))
}

/** An owned copy Web Crypto accepts (a view into a shared or foreign buffer is not a BufferSource everywhere). */
const own = (bytes: Uint8Array): Uint8Array<ArrayBuffer> => Uint8Array.from(bytes)

export function aesGcmTransformer(secret: Uint8Array): ValueTransformer {
  const key = importOnce(secret, 'AES-GCM')
  return {
    async toStorage(bytes: Uint8Array, context: DataContext): Promise<Uint8Array> {
      const iv = randomBytes(GCM_NONCE_BYTES)
      const sealed = await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData: own(context.authenticatedData) }, await key(), own(bytes))
      const out = new Uint8Array(GCM_NONCE_BYTES + sealed.byteLength)
      out.set(iv, 0)
      out.set(new Uint8Array(sealed), GCM_NONCE_BYTES)
      return out
    },
    async fromStorage(data: Uint8Array, context: DataContext) {
      if (data.length < GCM_NONCE_BYTES + GCM_TAG_BYTES) throw new Error(TOO_SHORT)
      let plain: ArrayBuffer
      try {
        plain = await crypto.subtle.decrypt(
          { name: 'AES-GCM', iv: own(data.subarray(0, GCM_NONCE_BYTES)), additionalData: own(context.authenticatedData) },
          await key(),
          own(data.subarray(GCM_NONCE_BYTES)),
        )
      } catch {
        throw new Error(GCM_FAILED)
      }
      return { bytes: new Uint8Array(plain), stale: false }
    },
  }
}

export function aesCbcTransformer(secret: Uint8Array): ValueTransformer {
  const key = importOnce(secret, 'AES-CBC')
  return {
    // Web Crypto's AES-CBC pads with PKCS#7, as upstream does by hand.
    async toStorage(bytes: Uint8Array): Promise<Uint8Array> {
      const iv = randomBytes(CBC_BLOCK_BYTES)
      const encrypted = await crypto.subtle.encrypt({ name: 'AES-CBC', iv }, await key(), own(bytes))
      const out = new Uint8Array(CBC_BLOCK_BYTES + encrypted.byteLength)
      out.set(iv, 0)
      out.set(new Uint8Array(encrypted), CBC_BLOCK_BYTES)
      return out
    },
    async fromStorage(data: Uint8Array) {
      if (data.length < CBC_BLOCK_BYTES) throw new Error(TOO_SHORT)
      const body = data.subarray(CBC_BLOCK_BYTES)
      if (body.length % CBC_BLOCK_BYTES !== 0) throw new Error(NOT_BLOCKS)
      if (body.length === 0) throw new Error('invalid PKCS7 data (empty or not padded)')
      let plain: ArrayBuffer
      try {
        plain = await crypto.subtle.decrypt({ name: 'AES-CBC', iv: own(data.subarray(0, CBC_BLOCK_BYTES)) }, await key(), own(body))
      } catch {
        throw new Error(BAD_PADDING)
      }
      return { bytes: new Uint8Array(plain), stale: false }
    },
  }
}
