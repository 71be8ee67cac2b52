/**
 * AES-GCM with a key derived per value from a seed (upstream's
 * HKDF_SHA256_XNONCE_AES_GCM_SEED, aes_extended_nonce.go): a write draws 32
 * random bytes of info, derives the value's key with HKDF-Expand(SHA-256,
 * seed, info) (the seed is already the pseudo-random key: no extract step)
 * and stores info, then AES-GCM's 12-byte nonce and sealed data, the
 * object's storage key as authenticated data. One KMS call per seed serves
 * any number of writes without wearing out GCM's random nonces.
 */
import type { DataContext, ValueTransformer } from '../../storage/value/transformer.js'
import { aesGcmTransformer } from '../aes.js'

export const SEED_BYTES = 32
const INFO_BYTES = 32

/** HKDF-Expand's first block: HMAC-SHA256(prk, info || 0x01), which is the 32-byte key asked for. */
type HmacKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>

async function expand(seedKey: HmacKey, info: Uint8Array): Promise<Uint8Array> {
  const input = new Uint8Array(info.length + 1)
  input.set(info, 0)
  input[info.length] = 1
  return new Uint8Array(await crypto.subtle.sign('HMAC', seedKey, input))
}

export function seededGcmTransformer(seed: Uint8Array): ValueTransformer {
  if (seed.length < SEED_BYTES) throw new Error(`invalid seed length ${seed.length} used for key generation`)
  const hmac = crypto.subtle.importKey('raw', Uint8Array.from(seed), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  const derived = async (info: Uint8Array): Promise<ValueTransformer> => aesGcmTransformer(await expand(await hmac, info))
  return {
    async toStorage(bytes: Uint8Array, context: DataContext): Promise<Uint8Array> {
      const info = crypto.getRandomValues(new Uint8Array(INFO_BYTES))
      const sealed = await (await derived(info)).toStorage(bytes, context)
      const out = new Uint8Array(INFO_BYTES + sealed.length)
      out.set(info, 0)
      out.set(sealed, INFO_BYTES)
      return out
    },
    async fromStorage(data: Uint8Array, context: DataContext) {
      if (data.length < INFO_BYTES) throw new Error('the stored data was shorter than the required size')
      return (await derived(data.subarray(0, INFO_BYTES))).fromStorage(data.subarray(INFO_BYTES), context)
    },
  }
}
