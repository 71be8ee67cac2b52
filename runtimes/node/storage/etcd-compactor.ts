/**
 * Periodic compaction (`--kvstore-compaction-interval`), as upstream's
 * compactor: each interval it compacts the revision it saw one interval
 * earlier, so etcd keeps about one interval of history for watches and
 * paged lists to catch up with.
 *
 * Several API servers share the work through the `compact_rev_key` key:
 * its version is a logical clock. A server whose clock matches etcd's bumps
 * it (writing the revision it compacts) and compacts; one that lost the race
 * adopts etcd's clock and tries again next interval. So a cluster compacts
 * once per interval, and when a server stops another takes over within two.
 */
import { keyBytes } from './etcd-kv.js'
import type { TxnRequest, TxnResponse } from './etcd-wire.js'

/** Upstream's key, outside --kvstore-prefix, so every API server of a cluster finds it. */
export const COMPACT_REV_KEY = 'compact_rev_key'

export interface CompactionRound {
  /** The revision compacted this round, when this server did compact. */
  compacted?: number
  /** etcd's revision now: what the next round compacts. */
  revision: number
}

export class EtcdCompactor {
  /** The version of compact_rev_key this server expects (0: the key does not exist yet). */
  private clock = 0
  /** The revision seen one round ago: the next one to compact (0: none yet, nothing to compact). */
  private seen = 0
  private timer: ReturnType<typeof setTimeout> | undefined
  private stopped = false

  constructor(
    private readonly kv: { txn(req: TxnRequest): Promise<TxnResponse> },
    private readonly compact: (revision: number) => Promise<void>,
    readonly intervalMs: number,
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {
    if (intervalMs > 0) this.schedule()
  }

  /** One round; the loop runs it every interval, tests call it directly. */
  async compactOnce(): Promise<CompactionRound> {
    const key = keyBytes(COMPACT_REV_KEY)
    const res = await this.kv.txn({
      compare: [{ key, target: 'Version', result: 'Equal', version: this.clock }],
      // The put bumps the key's version: the clock moves on for everyone.
      success: [{ request_put: { key, value: Buffer.from(String(this.seen)) } }],
      failure: [{ request_range: { key } }],
    })
    const revision = res.header.revision
    const toCompact = this.seen
    this.seen = revision
    if (!res.succeeded) {
      // Another server compacted this round: follow its clock.
      const kv = res.responses[0]?.response_range?.kvs[0]
      this.clock = kv ? kv.version : 0
      return { revision }
    }
    this.clock++
    // The first round only records where history starts, as upstream.
    if (toCompact === 0) return { revision }
    await this.compact(toCompact)
    return { compacted: toCompact, revision }
  }

  stop(): void {
    this.stopped = true
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
  }

  private schedule(): void {
    if (this.stopped) return
    this.timer = setTimeout(() => {
      this.compactOnce()
        .catch(this.onError)
        .finally(() => this.schedule())
    }, this.intervalMs)
    // Compaction alone never keeps the process alive.
    this.timer.unref()
  }
}
