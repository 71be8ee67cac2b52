/**
 * `Storage.createMany` for a backend without a batch of its own: one create
 * after the other, stopping at the first key taken.
 */
import type { KubeObject } from '../machinery/object.js'
import { type Storage, StorageError } from './interface.js'

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
