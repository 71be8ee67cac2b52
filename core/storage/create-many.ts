/**
 * Helpers of `Storage.createMany`: one create after the other for a
 * backend without a batch of its own, and the groups a batching backend
 * may write together.
 */
import type { KubeObject } from '../machinery/object.js'
import { type Storage, StorageError } from './interface.js'

/** One create after the other, stopping at the first key taken. */
export async function createOneByOne(storage: Pick<Storage, 'create'>, objects: readonly (readonly [key: string, obj: KubeObject])[]): Promise<number[]> {
  const revisions = objects.map(() => 0)
  for (const [i, [key, obj]] of objects.entries()) {
    try {
      revisions[i] = Number((await storage.create(key, obj)).metadata.resourceVersion)
    } catch (err) {
      if (err instanceof StorageError && err.code === 'KeyExists') break
      throw err
    }
  }
  return revisions
}

/**
 * The objects' indexes in groups that each hold at most one object of a
 * kind, and at most `most` objects: a backend that writes a group in one
 * transaction, at one revision, then never gives two objects of one
 * resource the same revision (a watch cache of a resource takes events at
 * one revision for one change, as upstream's). Each kind's objects keep
 * their order; an object without a kind is a group of its own.
 */
export function groupsOfDistinctKinds(objects: readonly (readonly [key: string, obj: KubeObject])[], most: number): number[][] {
  const groups: number[][] = []
  /** For each kind, the group its next object goes to. */
  const nextGroup = new Map<string, number>()
  for (const [i, [, obj]] of objects.entries()) {
    // By kind alone: a resource's objects share it whatever their version (and core's and events.k8s.io's Events share a store).
    const kind = typeof obj.kind === 'string' && obj.kind !== '' ? obj.kind : undefined
    let at = kind === undefined ? groups.length : (nextGroup.get(kind) ?? 0)
    while (at < groups.length && groups[at]!.length >= most) at++
    if (at === groups.length) groups.push([])
    groups[at]!.push(i)
    if (kind !== undefined) nextGroup.set(kind, at + 1)
  }
  return groups
}
