/**
 * Where the verifier and discovery find the public keys of service-account
 * tokens: a fixed list (the key files) or a cache of an external signer's
 * keys that refreshes itself.
 */
import type { VerificationKey } from './keys.js'

/** Static keys may be cached an hour, as upstream's static key getter tells relying parties. */
export const STATIC_KEYS_MAX_AGE_SECONDS = 3600

export interface PublicKeySet {
  /** The keys a token naming `kid` may be signed with (all of them for ''); may refresh when none is known. */
  keysFor(kid: string): Promise<readonly VerificationKey[]>
  /** The keys published at the key set URI, and how long a reader may keep them. */
  published(): { keys: readonly VerificationKey[]; maxAgeSeconds: number }
}

export function staticKeySet(keys: readonly VerificationKey[]): PublicKeySet {
  return {
    keysFor: (kid) => Promise.resolve(kid ? keys.filter((k) => k.kid === kid) : keys),
    published: () => ({ keys, maxAgeSeconds: STATIC_KEYS_MAX_AGE_SECONDS }),
  }
}
