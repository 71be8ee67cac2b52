/**
 * How upstream chooses among transformers by the bytes a value starts with
 * (its value.NewPrefixTransformers): the first transformer writes, with its
 * prefix in front; a read tries, in order, every transformer whose prefix
 * the value starts with and takes the first that succeeds. A value read by
 * any but the first is stale, so the next write rewrites it with the first.
 * Used twice, as upstream nests it: providers under `k8s:enc:<provider>:v1:`,
 * and inside one provider its keys under `<key name>:`.
 */
import { type DataContext, encryptCheckTransformer, type FromStorage, type ValueTransformer } from '../storage/value/transformer.js'

export interface PrefixedTransformer {
  prefix: Uint8Array
  transformer: ValueTransformer
}

const encoder = new TextEncoder()

export const prefixBytes = (text: string): Uint8Array => encoder.encode(text)

function startsWith(data: Uint8Array, prefix: Uint8Array): boolean {
  if (data.length < prefix.length) return false
  for (let i = 0; i < prefix.length; i++) if (data[i] !== prefix[i]) return false
  return true
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length)
  out.set(a, 0)
  out.set(b, a.length)
  return out
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err))

/** Several failures read as Go's aggregate error prints them; one as itself. */
function aggregate(errors: unknown[]): Error {
  if (errors.length === 1) return errors[0] instanceof Error ? errors[0] : new Error(message(errors[0]))
  return new Error(`[${errors.map(message).join(', ')}]`)
}

/** `noMatch` is the failure when no prefix matches (upstream words it per level). */
export function prefixTransformers(noMatch: string, entries: readonly PrefixedTransformer[]): ValueTransformer {
  const first = entries[0]
  if (!first) throw new Error('prefixTransformers needs at least one transformer')
  return {
    async toStorage(bytes: Uint8Array, context: DataContext): Promise<Uint8Array> {
      return concat(first.prefix, await first.transformer.toStorage(bytes, context))
    },
    async fromStorage(data: Uint8Array, context: DataContext): Promise<FromStorage> {
      const errors: unknown[] = []
      for (const [i, entry] of entries.entries()) {
        if (!startsWith(data, entry.prefix)) continue
        try {
          const { bytes, stale } = await entry.transformer.fromStorage(data.subarray(entry.prefix.length), context)
          return { bytes, stale: stale || i !== 0 }
        } catch (err) {
          // Two entries may share a prefix (one provider twice, with other keys): a failure never ends the search.
          errors.push(err)
        }
      }
      throw errors.length ? aggregate(errors) : new Error(noMatch)
    },
  }
}

/** The `identity` provider: no prefix, and a value marked as encrypted is refused. */
export const identityProvider: ValueTransformer = encryptCheckTransformer
