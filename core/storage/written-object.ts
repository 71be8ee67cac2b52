/**
 * The object a write stores, made ready before the write. What a store
 * hands its watchers and its caller after a write is the value decoded
 * from the bytes written (as a later read decodes it), stamped with the
 * write's revision and frozen. Decoding and freezing are passes over the
 * whole object: for one of a megabyte they take tens of milliseconds each,
 * which, done after the commit, held the thread in one piece with the
 * commit and the answer. Done before the write, a large value's passes are
 * steps of their own with other requests served between them, and the
 * commit is left with the stamp and the freeze of the metadata. The object
 * kept for a large value is marked large (machinery/large-objects.ts), so
 * that the copies handed out of it later and the answer's encoding run in
 * steps too.
 */
import { canonicalCopy, canonicalCopyInSteps } from '../encoding/canonical.js'
import { jsonBytes } from '../machinery/json-bytes.js'
import { isMarkedLarge, markedLarge } from '../machinery/large-objects.js'
import { cloneJson, cloneJsonInSteps, type KubeObject } from '../machinery/object.js'
import { type Checkpointed, runAtOnce, runAtOnceOrInSlices, runInSlices, TimeSlice, yieldToEventLoop } from '../machinery/time-slice.js'
import type { ObjectCodec } from './codec.js'
import { deepFreeze, deepFreezeInSteps, stampRevision } from './objects.js'

/** Values of at least this many bytes are decoded and frozen as steps of their own (a few milliseconds a pass and up). */
export const LARGE_VALUE_BYTES = 64 * 1024

/** Whether a codec's bytes are a value whose passes are steps of their own. */
export function isLargeValue(plain: Uint8Array): boolean {
  return plain.byteLength >= LARGE_VALUE_BYTES
}

/**
 * `plain` (a codec's bytes) decoded, every part but it and its metadata object
 * frozen already; committedObject stamps and freezes it once the write has its
 * revision. Other requests run before each pass over a large value.
 */
export async function decodedForWrite(codec: ObjectCodec, plain: Uint8Array): Promise<KubeObject> {
  const large = isLargeValue(plain)
  return frozenButMetadata(large ? await decodedInAStep(codec, plain) : codec.decode(plain), large)
}

/** A large value decoded in a step of its own, after other requests ran (for a store whose writes hand on an object they do not freeze). */
export async function decodedInAStep(codec: ObjectCodec, plain: Uint8Array): Promise<KubeObject> {
  await yieldToEventLoop()
  return markedLarge(codec.decode(plain))
}

/**
 * What an object held as it is would take stored: its JSON's bytes, as the
 * transformed values hold it (a store that keeps objects holds them to its
 * size limit by this). Counted by a walk with checkpoints rather than by
 * JSON.stringify, which is one piece (200 ms for an object of 250,000 keys)
 * and would take the same to tell a large object from a small one first.
 */
export function jsonSizeOf(obj: KubeObject): number | Promise<number> {
  return runAtOnceOrInSlices(jsonBytes(obj))
}

/** A store that keeps objects rather than bytes: `obj` (of `size` bytes as JSON) copied in Go's order, made ready as decodedForWrite's. */
export async function copiedForWrite(obj: KubeObject, size: number): Promise<KubeObject> {
  const large = size >= LARGE_VALUE_BYTES
  const copy = large ? markedLarge(await runInSlices(canonicalCopyInSteps(obj), TimeSlice.startingNow())) : canonicalCopy(obj)
  return frozenButMetadata(copy, large)
}

async function frozenButMetadata(object: KubeObject, large: boolean): Promise<KubeObject> {
  if (large) await runInSlices(freezeAllButMetadata(object), TimeSlice.startingNow())
  else runAtOnce(freezeAllButMetadata(object))
  return object
}

/** Every part of `object` frozen but itself and its metadata object, which take the revision at the commit; the last freeze passes over what is frozen here. */
function* freezeAllButMetadata(object: KubeObject): Checkpointed<void> {
  const parts = object as unknown as Record<string, unknown>
  for (const key in parts) {
    const part = parts[key]
    if (key !== 'metadata') yield* deepFreezeInSteps(part)
    else if (typeof part === 'object' && part !== null) for (const field of Object.values(part)) yield* deepFreezeInSteps(field)
  }
}

/**
 * A copy of a stored object for a caller that may change it: a large one
 * (marked when its write made it ready) copied in steps, and marked too.
 */
export function copiedForCaller(obj: KubeObject): KubeObject | Promise<KubeObject> {
  if (!isMarkedLarge(obj)) return cloneJson(obj)
  return runInSlices(cloneJsonInSteps(obj), TimeSlice.startingNow()).then(markedLarge)
}

/** The stored object of a write decodedForWrite made ready, at the revision the write got: frozen whole. */
export function committedObject(object: KubeObject, revision: number): KubeObject {
  return deepFreeze(stampRevision(object, revision))
}

/**
 * The object a delete hands its watchers: the stored one at the delete's
 * revision, frozen. Only its metadata is copied (the rest is the frozen
 * stored object's own): a deep copy of an object of a megabyte held the
 * thread with the commit. A large object's copy stays marked large.
 */
export function deletedObject(stored: KubeObject, revision: number): KubeObject {
  const frozen = deepFreeze(stored)
  const copy: KubeObject = { ...frozen, metadata: { ...frozen.metadata } }
  return committedObject(isMarkedLarge(frozen) ? markedLarge(copy) : copy, revision)
}
