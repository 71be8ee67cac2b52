import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KmsV1Client } from '../../../core/encryption/kms/client.js'
import { KmsV1Provider } from '../../../core/encryption/kms/kms-v1.js'
import { DEFAULT_KMS_TIMINGS as TIMINGS } from '../../../core/encryption/kms/probe.js'

const CONTEXT = { authenticatedData: new TextEncoder().encode('/registry/secrets/default/s') }
/** The longest encrypted DEK the value's two-byte length prefix can state. */
const WRAPPED_DEK_BYTES = 0xffff

/** A plugin whose encrypted DEK fills the whole length prefix: the DEK, then padding. */
function bulkyPlugin(): KmsV1Client {
  return {
    version: () => Promise.resolve('v1beta1'),
    encrypt(plain) {
      const out = new Uint8Array(WRAPPED_DEK_BYTES).fill(0xa5)
      out.set(plain)
      return Promise.resolve(out)
    },
    decrypt: (cipher) => Promise.resolve(cipher.slice(0, 32)),
    close() {},
  }
}

/**
 * Runs `start` synchronously under a stack already deep: within a few frames
 * of where a call given the encrypted DEK's 64 Ki bytes as arguments no
 * longer fits, as a read called from deep in a request's handling would find
 * it. The spread is tried every `STRIDE` frames, not at each: trying it costs
 * 64 Ki arguments, and there are thousands of frames to go down.
 */
function underDeepStack<T>(start: () => T): T {
  const STRIDE = 32
  const spreadFits = () => {
    try {
      String.fromCharCode(...new Uint8Array(WRAPPED_DEK_BYTES))
      return true
    } catch (err) {
      if (err instanceof RangeError) return false
      throw err
    }
  }
  const descend = (depth: number): T => (depth % STRIDE !== 0 || spreadFits() ? descend(depth + 1) : start())
  return descend(1)
}

describe('KMS v1 provider', () => {
  it('reads a value whose encrypted DEK is 64 KiB with no cached DEK, however deep the caller', async () => {
    const plain = new TextEncoder().encode('{"kind":"Secret"}')
    const stored = await new KmsV1Provider('legacy', bulkyPlugin(), 10, TIMINGS).toStorage(plain, CONTEXT)
    assert.equal((stored[0]! << 8) | stored[1]!, WRAPPED_DEK_BYTES)
    // A new provider has no DEK cached: the read keys its cache by the encrypted DEK first.
    const reader = new KmsV1Provider('legacy', bulkyPlugin(), 10, TIMINGS)
    const read = await underDeepStack(() => reader.fromStorage(stored, CONTEXT))
    assert.deepEqual(read.bytes, plain)
  })
})
