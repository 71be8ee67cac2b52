/**
 * Every object under a prefix, read from the store itself page by page. A
 * paged read is the backend's, never the watch cache's (core/storage/cacher.ts,
 * as upstream's shouldDelegateList), so it is consistent without first
 * waiting for the cache to hear of every write made meanwhile: what start-up
 * work wants, while start-up is itself writing. One round trip a page.
 */
import type { KubeObject } from '../machinery/object.js'
import type { ListOptions, Storage } from './interface.js'
import { appendAll } from '../machinery/append-all.js'

export async function readAllPaged(
  storage: Pick<Storage, 'list'>,
  prefix: string,
  pageSize: number,
  opts: Pick<ListOptions, 'readOnly'> = {},
): Promise<KubeObject[]> {
  const items: KubeObject[] = []
  let token: string | undefined
  do {
    const page = await storage.list(prefix, { ...opts, limit: pageSize, ...(token ? { continue: token } : {}) })
    appendAll(items, page.items)
    token = page.continue
  } while (token)
  return items
}
