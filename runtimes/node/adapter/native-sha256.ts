/**
 * Node's own SHA-256 for core's digests of secrets (core/authn/constant-time.ts):
 * `crypto.hash` digests at once on the calling thread, with none of a Hash
 * object's set-up, and hashes a string's UTF-8 bytes as core's does.
 */
import { hash } from 'node:crypto'
import type { Sha256Hex } from '../../../core/authn/constant-time.js'

export const nodeSha256Hex: Sha256Hex = (text) => hash('sha256', text, 'hex')
