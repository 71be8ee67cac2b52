/**
 * One resource's objects fed to an in-memory index: listed once, then
 * followed by a watch from the list's revision; a watch that fails is
 * replaced by a fresh list, and objects missing from it are reported
 * deleted. Authorizers that decide from objects (the Node graph) read their
 * index only, never the storage, on a request.
 */
import type { Logger } from '../logging/logger.js'
import type { KubeObject } from '../machinery/object.js'
import type { Storage, Watcher } from '../storage/interface.js'

export type FeedEvent = 'upsert' | 'delete'

export interface ObjectFeed {
  /** Settles after the first list has been fed. */
  readonly ready: Promise<void>
  stop(): void
}

const RETRY_MS = 500

const keyOf = (o: KubeObject) => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`

export function feedObjects(storage: Storage, prefix: string, onEvent: (event: FeedEvent, obj: KubeObject) => void, logger: Logger): ObjectFeed {
  const known = new Map<string, KubeObject>()
  let stopped = false
  let watcher: Watcher | undefined
  let retry: ReturnType<typeof setTimeout> | undefined

  const relist = async (): Promise<number> => {
    const list = await storage.list(prefix)
    const seen = new Set<string>()
    for (const obj of list.items) {
      const key = keyOf(obj)
      seen.add(key)
      known.set(key, obj)
      onEvent('upsert', obj)
    }
    for (const [key, obj] of known) {
      if (seen.has(key)) continue
      known.delete(key)
      onEvent('delete', obj)
    }
    return list.revision
  }

  const follow = async (revision: number): Promise<void> => {
    let from = revision
    while (!stopped) {
      try {
        watcher = storage.watch(prefix, { resourceVersion: String(from) })
        for await (const event of watcher) {
          if (event.type === 'BOOKMARK') continue
          from = event.revision
          if (event.type === 'DELETED') {
            known.delete(keyOf(event.object))
            onEvent('delete', event.object)
          } else {
            known.set(keyOf(event.object), event.object)
            onEvent('upsert', event.object)
          }
        }
        if (stopped) return
      } catch (err) {
        if (stopped) return
        logger.warn({ prefix, err: String(err) }, 'authorizer watch failed; listing again')
      }
      await new Promise<void>((resolve) => (retry = setTimeout(resolve, RETRY_MS)))
      try {
        from = await relist()
      } catch (err) {
        logger.warn({ prefix, err: String(err) }, 'authorizer list failed; trying again')
      }
    }
  }

  const ready = relist().then((revision) => {
    void follow(revision)
  })
  return {
    ready,
    stop() {
      stopped = true
      if (retry) clearTimeout(retry)
      watcher?.stop()
    },
  }
}
