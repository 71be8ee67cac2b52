/**
 * The runtime's own SHA-256 for core's digests of secrets
 * (core/authn/constant-time.ts): node:crypto's one-shot `hash` digests at
 * once on the calling thread, with none of a Hash object's set-up, and
 * hashes a string's UTF-8 bytes as core's does. Node (20.12 and later), Bun
 * and Deno all have it (for a token of tens of bytes: 0.4, 0.5 and 2.1 µs,
 * against 3.5, 2.8 and 4.6 µs for the JavaScript one); undefined where the
 * runtime's node:crypto has none, and core's own one stays.
 */
import * as crypto from 'node:crypto'
import type { Sha256Hex } from '../../../core/authn/constant-time.js'

export const nativeSha256Hex: Sha256Hex | undefined =
  typeof crypto.hash === 'function' ? (text) => crypto.hash('sha256', text, 'hex') : undefined
