/**
 * The `secretbox` provider's cipher, laid out as upstream's
 * storage/value/encrypt/secretbox writes it: a random 24-byte nonce, then
 * NaCl's box (16-byte Poly1305 tag, then the XSalsa20 ciphertext). Nothing
 * is authenticated beyond the value itself, as upstream. Neither Web Crypto
 * nor the runtimes offer XSalsa20-Poly1305, so it comes from
 * @noble/ciphers (audited, runtime-agnostic), whose box is NaCl's layout.
 */
import { xsalsa20poly1305 } from '@noble/ciphers/salsa.js'
import type { ValueTransformer } from '../storage/value/transformer.js'

const NONCE_BYTES = 24
const TAG_BYTES = 16

export function secretboxTransformer(secret: Uint8Array): ValueTransformer {
  const key = secret.slice()
  return {
    async toStorage(bytes: Uint8Array): Promise<Uint8Array> {
      const nonce = crypto.getRandomValues(new Uint8Array(NONCE_BYTES))
      const box = xsalsa20poly1305(key, nonce).encrypt(bytes)
      const out = new Uint8Array(NONCE_BYTES + box.length)
      out.set(nonce, 0)
      out.set(box, NONCE_BYTES)
      return out
    },
    async fromStorage(data: Uint8Array) {
      // Upstream's wordings, the second one as odd as it is there.
      if (data.length < NONCE_BYTES + TAG_BYTES) throw new Error('the stored data was shorter than the required size')
      let opened: Uint8Array
      try {
        opened = xsalsa20poly1305(key, data.slice(0, NONCE_BYTES)).decrypt(data.slice(NONCE_BYTES))
      } catch {
        throw new Error('output array was not large enough for encryption')
      }
      return { bytes: opened, stale: false }
    },
  }
}
