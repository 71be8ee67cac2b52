/**
 * The `secretbox` provider's cipher, laid out as upstream's
 * storage/value/encrypt/secretbox writes it: a random 24-byte nonce, then
 * NaCl's box (16-byte Poly1305 tag, then the XSalsa20 ciphertext). Nothing
 * is authenticated beyond the value itself, as upstream.
 */
import type { ValueTransformer } from '../storage/value/transformer.js'
import { SECRETBOX_NONCE_BYTES, SECRETBOX_TAG_BYTES, secretboxOpen, secretboxSeal } from './xsalsa20-poly1305.js'

export function secretboxTransformer(secret: Uint8Array): ValueTransformer {
  const key = secret.slice()
  return {
    async toStorage(bytes: Uint8Array): Promise<Uint8Array> {
      const nonce = crypto.getRandomValues(new Uint8Array(SECRETBOX_NONCE_BYTES))
      const box = secretboxSeal(key, nonce, bytes)
      const out = new Uint8Array(SECRETBOX_NONCE_BYTES + box.length)
      out.set(nonce, 0)
      out.set(box, SECRETBOX_NONCE_BYTES)
      return out
    },
    async fromStorage(data: Uint8Array) {
      // Upstream's wordings, the second one as odd as it is there.
      if (data.length < SECRETBOX_NONCE_BYTES + SECRETBOX_TAG_BYTES) throw new Error('the stored data was shorter than the required size')
      const opened = secretboxOpen(key, data.subarray(0, SECRETBOX_NONCE_BYTES), data.subarray(SECRETBOX_NONCE_BYTES))
      if (!opened) throw new Error('output array was not large enough for encryption')
      return { bytes: opened, stale: false }
    },
  }
}
