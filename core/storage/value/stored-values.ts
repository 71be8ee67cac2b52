/**
 * Objects to stored bytes and back for a backend that keeps bytes: the
 * codec, then the key's transformer. A read-modify-write compares the
 * codec's bytes, never the stored ones (a transformer with a fresh nonce
 * makes those differ every time), and writes whenever the read was stale.
 */
import type { KubeObject } from '../../machinery/object.js'
import { sameBytes } from '../../machinery/same-bytes.js'
import type { ObjectCodec } from '../codec.js'
import { refuseOversizedValue } from '../errors.js'
import { isMarkedLarge } from '../../machinery/large-objects.js'
import { runInSlices, TimeSlice } from '../../machinery/time-slice.js'
import { StorageError } from '../interface.js'
import { type FromStorage, keyContext, type ValueTransformer } from './transformer.js'

export interface DecodedValue {
  object: KubeObject
  /** The codec's bytes, to compare a rewrite against. */
  plain: Uint8Array
  stale: boolean
}

export class StoredValues {
  constructor(
    private readonly codec: ObjectCodec,
    /** The transformer of the resource a key belongs to. */
    private readonly transformerFor: (key: string) => ValueTransformer,
  ) {}

  /** The bytes to store for `obj`; refused past what etcd stores, measured as etcd would (after encryption). */
  async encode(key: string, obj: KubeObject): Promise<{ plain: Uint8Array; stored: Uint8Array }> {
    const inSteps = isMarkedLarge(obj) ? this.codec.encodeInSteps?.(obj) : undefined
    const plain = inSteps ? await runInSlices(inSteps, TimeSlice.startingNow()) : this.codec.encode(obj)
    const stored = await this.transformerFor(key).toStorage(plain, keyContext(key))
    refuseOversizedValue(key, stored.length)
    return { plain, stored }
  }

  async decode(key: string, stored: Uint8Array): Promise<DecodedValue> {
    const { plain, stale } = await this.plain(key, stored)
    return { object: this.codec.decode(plain), plain, stale }
  }

  /** Whether the key's stored bytes are the codec's (no encryption, nothing to rewrite): comparable with them as they are. */
  storesCodecBytes(key: string): boolean {
    return this.transformerFor(key).storesCodecBytes === true
  }

  /** The codec's bytes of a stored value (decrypted), not decoded: for a caller that has the object already. */
  async plain(key: string, stored: Uint8Array): Promise<Omit<DecodedValue, 'object'>> {
    let read: FromStorage
    try {
      read = await this.transformerFor(key).fromStorage(stored, keyContext(key))
    } catch (err) {
      // Never the stored bytes as an object: a value no provider reads is an error naming its key (upstream's wording).
      throw new StorageError('Internal', key, `unable to transform key ${JSON.stringify(key)}: ${err instanceof Error ? err.message : String(err)}`)
    }
    return { plain: read.bytes, stale: read.stale }
  }
}

/** Whether an update must be written: the object changed, or what is stored should be rewritten. */
export function mustWrite(current: Pick<DecodedValue, 'plain' | 'stale'>, nextPlain: Uint8Array): boolean {
  return current.stale || !sameBytes(current.plain, nextPlain)
}
