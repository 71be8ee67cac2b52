/**
 * Leases for keys that expire (events, `--event-ttl`), shared as upstream's
 * leaseManager shares them: granting a lease per write would load etcd, so a
 * lease is reused while it outlives the requested TTL by less than the reuse
 * window (`--lease-reuse-duration-seconds`, at most 5% of the TTL). Each lease
 * is granted with that window added, so a key lives between its TTL and its
 * TTL plus the window. Leases are plain grants: nothing keeps them alive.
 */

export interface LeaseOptions {
  /** `--lease-reuse-duration-seconds`. @default 60 */
  reuseDurationSeconds?: number
  /** Keys attached to one lease before a new one is granted, as upstream. @default 1000 */
  maxObjectsPerLease?: number
}

/** Upstream reuses a lease for at most this share of the requested TTL. */
const REUSE_SHARE_OF_TTL = 0.05

export class LeaseManager {
  private prev: { id: string; expiresAt: number; objects: number } | undefined
  /** Concurrent writers wait for one grant instead of each granting their own. */
  private pending: Promise<string> | undefined
  private readonly reuseSeconds: number
  private readonly maxObjects: number

  constructor(
    /** Grants a lease of `ttlSeconds` and gives its ID (decimal text: IDs use all 64 bits). */
    private readonly grant: (ttlSeconds: number) => Promise<{ ID: string }>,
    opts: LeaseOptions = {},
  ) {
    this.reuseSeconds = Math.max(0, opts.reuseDurationSeconds ?? 60)
    this.maxObjects = Math.max(1, opts.maxObjectsPerLease ?? 1000)
  }

  /** The id of a lease that expires no sooner than `ttlSeconds` from now. */
  async leaseFor(ttlSeconds: number): Promise<string> {
    while (this.pending) await this.pending.catch(() => undefined)
    const now = Date.now()
    const reuse = Math.min(Math.floor(ttlSeconds * REUSE_SHARE_OF_TTL), this.reuseSeconds)
    const prev = this.prev
    if (prev && now + ttlSeconds * 1000 < prev.expiresAt && now + (ttlSeconds + reuse) * 1000 > prev.expiresAt && prev.objects < this.maxObjects) {
      prev.objects++
      return prev.id
    }
    const ttl = ttlSeconds + reuse
    this.pending = this.grant(ttl).then((granted) => {
      this.prev = { id: granted.ID, expiresAt: now + ttl * 1000, objects: 1 }
      return granted.ID
    })
    try {
      return await this.pending
    } finally {
      this.pending = undefined
    }
  }
}
