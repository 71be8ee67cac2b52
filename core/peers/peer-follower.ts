/**
 * Follows the peer endpoint records as they change (upstream follows its
 * peers' identity leases with an informer): a list, then a watch from the
 * list's revision, so a server that starts is known as soon as it writes
 * its record, and one that stops as soon as it removes it. A server that
 * dies without removing it is dropped when its record expires (a timer set
 * to the expiry written in it, reset by each renewal), and the stale record
 * is removed as etcd's TTL would. When the watch ends (a compaction, the
 * store going away) the records are listed again and the watch reopened.
 */
import type { Logger } from '../logging/logger.js'
import type { KubeObject } from '../machinery/object.js'
import type { Storage } from '../storage/interface.js'
import { peerEndpointsPrefix, type PeerRecord, readPeerRecord, removeExpiredRecord } from './peer-endpoints.js'

export interface PeerRecordHandler {
  /** A live record was written or renewed (also for one already seen). */
  seen(record: PeerRecord): void
  /** The server's record was removed or expired. */
  gone(id: string): void
}

export interface FollowerContext {
  storage: Storage
  root: string
  now: () => Date
  logger: Logger
  /** Pause before listing again after the watch ended. @default 1000 */
  relistDelayMs?: number
}

export interface PeerFollower {
  /** Resolves once the first list has been handed over. */
  readonly synced: Promise<void>
  stop(): void
}

export function followPeerEndpoints(ctx: FollowerContext, handler: PeerRecordHandler): PeerFollower {
  const prefix = peerEndpointsPrefix(ctx.root)
  const abort = new AbortController()
  const expiries = new Map<string, ReturnType<typeof setTimeout>>()
  let markSynced: () => void = () => {}
  const synced = new Promise<void>((resolve) => (markSynced = resolve))

  const forget = (id: string) => {
    clearTimeout(expiries.get(id))
    if (expiries.delete(id)) handler.gone(id)
  }
  const expire = (item: KubeObject, id: string) => {
    forget(id)
    void removeExpiredRecord(ctx.storage, ctx.root, item)
  }
  const apply = (item: KubeObject) => {
    const record = readPeerRecord(item)
    if (!record) return
    const left = record.expiresAt - ctx.now().getTime()
    if (left <= 0) return expire(item, record.id)
    clearTimeout(expiries.get(record.id))
    expiries.set(
      record.id,
      setTimeout(() => expire(item, record.id), left),
    )
    handler.seen(record)
  }

  const followOnce = async () => {
    const { items, revision } = await ctx.storage.list(prefix)
    const listed = new Set(items.map((i) => i.metadata.name ?? ''))
    for (const id of [...expiries.keys()]) if (!listed.has(id)) forget(id)
    for (const item of items) apply(item)
    markSynced()
    const watcher = ctx.storage.watch(prefix, { resourceVersion: String(revision), signal: abort.signal })
    for await (const event of watcher) {
      if (event.type === 'DELETED') forget(event.object.metadata.name ?? '')
      else if (event.type !== 'BOOKMARK') apply(event.object)
    }
  }

  void (async () => {
    while (!abort.signal.aborted) {
      try {
        await followOnce()
      } catch (err) {
        if (!abort.signal.aborted) ctx.logger.warn({ err: String(err) }, 'cannot follow the peer endpoint records')
      }
      if (abort.signal.aborted) break
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, ctx.relistDelayMs ?? 1000)
        abort.signal.addEventListener(
          'abort',
          () => {
            clearTimeout(timer)
            resolve(undefined)
          },
          { once: true },
        )
      })
    }
  })()

  return {
    synced,
    stop() {
      abort.abort()
      for (const timer of expiries.values()) clearTimeout(timer)
      expiries.clear()
    },
  }
}
