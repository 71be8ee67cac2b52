/**
 * Leader election through a Lease in kube-system, as upstream's
 * client-go leaderelection runs kube-controller-manager: the candidate that
 * holds the lease runs the controllers that must run once in a cluster; the
 * others try again every retry period and take the lease over once its
 * holder stopped renewing it for a whole lease duration (measured on the
 * candidate's own clock from when it last saw the record change, so that
 * clocks of different machines need not agree). A leader that cannot renew
 * within the renew deadline stops its controllers before the lease can
 * pass to another.
 */
import { hasStatusCode } from '../machinery/status-error.js'
import type { Logger } from '../logging/logger.js'
import { LOOPBACK_IDENTITY } from '../machinery/identities.js'
import type { StoredResources } from './stored-resources.js'
import type { DirectWriteContext } from '../client/object-stores.js'
import { leases } from '../resources/groups/coordination.js'
import type { KubeObject } from '../machinery/object.js'
import { record, text } from '../resources/columns/values.js'
import type { ControllerSet } from './run-once.js'
import { type LeaseRecord, leaseRecord, microTime, withLeaseRecord } from './lease-record.js'

export interface LeaderElectionTimings {
  /** How long a lease holds without renewal (`--coordinated-leadership-lease-duration`). @default 15000 */
  leaseDurationMs: number
  /** A leader that could not renew for this long steps down (`--coordinated-leadership-renew-deadline`). @default 10000 */
  renewDeadlineMs: number
  /** Between attempts to acquire or renew (`--coordinated-leadership-retry-period`). @default 2000 */
  retryPeriodMs: number
}

export const DEFAULT_LEADER_ELECTION: LeaderElectionTimings = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2000 }

export const LEADER_ELECTION_NAMESPACE = 'kube-system'

export interface LeaderElectionSettings extends LeaderElectionTimings {
  leaseName: string
  /** Unique to this process: `<server id>_<uuid>`. */
  identity: string
  /** A holder that was an earlier run of this very server (its process is gone): taken over at once instead of waiting out the lease. */
  earlierSelf?: (holder: string) => boolean
  /**
   * Coordinated leader election (client-go's Coordinated mode): the lease is
   * never taken, only renewed once the election coordinator wrote this
   * candidate into it, and given up when the coordinator names another
   * preferred holder. @default false
   */
  coordinated?: boolean
}

export interface LeaderElection {
  readonly leading: boolean
  /** Resolves after the first attempt to take the lease: a lone server runs its controllers from then on. */
  readonly firstAttempt: Promise<void>
  /** Stops the controllers and gives the lease up, so that another server takes it at its next attempt. */
  stop(): Promise<void>
}

type Outcome = 'held' | 'other'

function context(now: Date): DirectWriteContext {
  return { user: LOOPBACK_IDENTITY, now, dryRun: false }
}

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const timer = setTimeout(done, ms)
    function done(): void {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    signal.addEventListener('abort', done)
  })

/** Runs `controllers` while this server holds the lease. */
export function startLeaderElection(
  stores: StoredResources,
  controllers: ControllerSet,
  settings: LeaderElectionSettings,
  now: () => Date,
  logger: Logger,
): LeaderElection {
  const store = stores.store(leases)
  const ns = LEADER_ELECTION_NAMESPACE
  const name = settings.leaseName
  const controller = new AbortController()
  let leading = false
  let lastRenewal = 0
  // The record as last seen and when (our clock): the lease is expired once it stays unchanged for its duration.
  let observed: { holder: string; renewTime: string; at: number } | undefined

  const durationSeconds = Math.max(1, Math.round(settings.leaseDurationMs / 1000))
  const ours = (at: Date, previous?: LeaseRecord): LeaseRecord => {
    const kept = previous?.holderIdentity === settings.identity
    return {
      holderIdentity: settings.identity,
      leaseDurationSeconds: durationSeconds,
      acquireTime: kept && previous.acquireTime ? previous.acquireTime : microTime(at),
      renewTime: microTime(at),
      leaseTransitions: previous ? previous.leaseTransitions + (kept ? 0 : 1) : 0,
    }
  }

  // Given up, not expired: the holder is cleared and the lease lasts a second, as upstream's release writes it.
  const release = async (): Promise<void> => {
    const at = now()
    await store
      .update(
        ns,
        name,
        (fresh) => {
          const rec = leaseRecord(fresh)
          if (rec.holderIdentity !== settings.identity) return fresh
          const released: LeaseRecord = { holderIdentity: '', leaseDurationSeconds: 1, acquireTime: microTime(at), renewTime: microTime(at), leaseTransitions: rec.leaseTransitions }
          return withLeaseRecord(fresh, released)
        },
        context(at),
      )
      .catch((err: unknown) => logger.warn({ err: String(err) }, 'leader election: cannot release the lease'))
  }

  const attempt = async (): Promise<Outcome> => {
    const at = now()
    const current = await store.get(ns, name).catch((err: unknown) => {
      if (hasStatusCode(err, 404)) return undefined
      throw err
    })
    if (!current) {
      if (settings.coordinated) return 'other'
      const lease: KubeObject = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace: ns }, spec: ours(at) }
      return store.create(ns, lease, context(at)).then(
        () => 'held' as const,
        (err: unknown) => {
          if (hasStatusCode(err, 409)) return 'other' as const
          throw err
        },
      )
    }
    const rec = leaseRecord(current)
    const renewTime = rec.renewTime ?? ''
    // Only a server's first look may take for gone a holder with its own id; later, that holder is a live twin.
    const firstLook = observed === undefined
    if (!observed || observed.holder !== rec.holderIdentity || observed.renewTime !== renewTime)
      observed = { holder: rec.holderIdentity, renewTime, at: at.getTime() }
    const mine = rec.holderIdentity === settings.identity
    const free =
      rec.holderIdentity === '' ||
      (firstLook && (settings.earlierSelf?.(rec.holderIdentity) ?? false)) ||
      observed.at + rec.leaseDurationSeconds * 1000 <= at.getTime()
    if (!mine && (!free || settings.coordinated)) return 'other'
    const preferred = text(record(current['spec'])['preferredHolder'])
    if (mine && settings.coordinated && preferred && preferred !== settings.identity) {
      // The coordinator found a better candidate: this one steps down and the lease is left to expire for it.
      await release()
      return 'other'
    }
    const readVersion = current.metadata.resourceVersion
    // The update names the version read: a candidate that wrote in between wins, this one sees a conflict.
    return store
      .update(ns, name, (fresh) => withLeaseRecord({ ...fresh, metadata: { ...fresh.metadata, resourceVersion: readVersion } }, ours(at, rec)), context(at))
      .then(
        () => 'held' as const,
        (err: unknown) => {
          if (hasStatusCode(err, 409) || hasStatusCode(err, 404)) return 'other' as const
          throw err
        },
      )
  }


  let firstDone: () => void = () => {}
  const firstAttempt = new Promise<void>((resolve) => (firstDone = resolve))
  const loop = async (): Promise<void> => {
    while (!controller.signal.aborted) {
      const outcome = await attempt().catch((err: unknown) => {
        logger.warn({ lease: `${ns}/${name}`, err: String(err) }, 'leader election: cannot read or write the lease')
        return 'error' as const
      })
      if (controller.signal.aborted) break
      const t = now().getTime()
      if (outcome === 'held') {
        lastRenewal = t
        if (!leading) {
          leading = true
          logger.info({ lease: `${ns}/${name}`, identity: settings.identity }, 'leader election: this server leads; starting the controllers')
          controllers.startAll()
        }
      } else if (leading && (outcome === 'other' || t - lastRenewal >= settings.renewDeadlineMs)) {
        leading = false
        logger.warn({ lease: `${ns}/${name}`, outcome }, 'leader election: leadership lost; stopping the controllers')
        controllers.stopAll()
      }
      firstDone()
      // Candidates spread their attempts as upstream's jitter does, so that they do not collide each period.
      const wait = leading ? settings.retryPeriodMs : settings.retryPeriodMs * (1 + Math.random() * 1.2)
      await sleep(wait, controller.signal)
    }
    firstDone()
  }
  const looping = loop()

  return {
    get leading() {
      return leading
    },
    firstAttempt,
    async stop() {
      controller.abort()
      await looping
      controllers.stopAll()
      if (!leading) return
      leading = false
      await release()
    },
  }
}
