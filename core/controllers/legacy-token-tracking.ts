/**
 * The date this cluster began tracking the use of legacy (secret-based)
 * service-account tokens, as upstream's legacy token tracking controller
 * keeps it: `kube-system/kube-apiserver-legacy-service-account-token-tracking`
 * with `data.since` the UTC day it was first written. kube-controller-manager's
 * legacy token cleaner reads it: a token whose secret carries no last-used
 * label counts as unused since that day. The ConfigMap is created when
 * absent, at most once per 30 minutes (servers sharing a store that
 * disagree about it would otherwise create and delete it in turn), and its
 * `since` is written again when it is not a date. Creations that lose a
 * race and writes to a ConfigMap gone meanwhile are let be: the informer
 * brings what happened, and the ConfigMap is looked at again. Every start
 * pays for the creation, so it is written below the request path (as the
 * other start-up writes), as kube-apiserver's loopback identity.
 */
import { followInformer, SharedInformer } from '../client/informer.js'
import { storageListWatch } from '../client/list-watch.js'
import type { Logger } from '../logging/logger.js'
import { LOOPBACK_IDENTITY } from '../machinery/identities.js'
import type { KubeObject } from '../machinery/object.js'
import { hasStatusCode, StatusError } from '../machinery/status-error.js'
import { configMaps } from '../resources/core/configmaps.js'
import type { StoredResources } from './stored-resources.js'
import { WorkQueue } from './garbage-collector-queue.js'
import { onClockJump } from './workloads/clock-jumps.js'

export const LEGACY_TOKEN_TRACKING_NAMESPACE = 'kube-system'
export const LEGACY_TOKEN_TRACKING_NAME = 'kube-apiserver-legacy-service-account-token-tracking'
export const LEGACY_TOKEN_TRACKING_SINCE = 'since'
/** Upstream's creation rate limit: one token every 30 minutes, a burst of one. */
export const CREATION_INTERVAL_MS = 30 * 60_000

/** The UTC day of `at` as Go's `2006-01-02` layout writes it. */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10)
}

/** Whether `text` parses with Go's `2006-01-02` layout: four-digit year, two-digit month and a day that month has. */
export function isDay(text: unknown): boolean {
  if (typeof text !== 'string') return false
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text)
  if (!m) return false
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])]
  if (month < 1 || month > 12 || day < 1) return false
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0
  return day <= (month === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31)
}

export interface LegacyTokenTrackingContext {
  readonly stores: StoredResources
  readonly now: () => Date
  readonly logger: Logger
}

export interface LegacyTokenTracking {
  /** Settles once the informer has listed and the ConfigMap was looked at once (written if it had to be). */
  readonly firstSync: Promise<void>
  stop(): void
}

const KEY = `${LEGACY_TOKEN_TRACKING_NAMESPACE}/${LEGACY_TOKEN_TRACKING_NAME}`

const sinceOf = (cm: KubeObject): unknown => (cm['data'] as Record<string, unknown> | undefined)?.[LEGACY_TOKEN_TRACKING_SINCE]
const withSince = (cm: KubeObject, since: string): KubeObject => ({ ...cm, data: { ...(cm['data'] as Record<string, string> | undefined), [LEGACY_TOKEN_TRACKING_SINCE]: since } })

export function startLegacyTokenTracking({ stores, now, logger }: LegacyTokenTrackingContext): LegacyTokenTracking {
  const store = stores.store(configMaps)
  // Upstream's informer reads kube-system alone (and the one name): a watch of every ConfigMap is not needed.
  const informer = new SharedInformer(storageListWatch(() => store, LEGACY_TOKEN_TRACKING_NAMESPACE), logger, `configmaps in ${LEGACY_TOKEN_TRACKING_NAMESPACE}`)
  const writer = (at: Date) => ({ user: LOOPBACK_IDENTITY, now: at, dryRun: false, fieldManager: 'kube-apiserver' })
  // The time the next creation may be made: the rate limiter's one token, full at start.
  let nextCreation = -Infinity
  // A creation held back by the rate limit waits for its time, on the runtime's timer or a clock moved by hand.
  let held: { timer: ReturnType<typeof setTimeout>; stopJumps: () => void } | undefined
  let stopped = false

  const queue = new WorkQueue<string>(() => sync(), {
    workers: 1,
    baseDelayMs: 5,
    maxDelayMs: 1000_000,
    onError: (_key, err) => logger.warn({ configmap: KEY, err: String(err) }, 'syncing the legacy token tracking ConfigMap failed; it will be retried'),
  })
  const enqueue = (): void => queue.add(KEY, KEY)

  const release = (): void => {
    if (!held) return
    clearTimeout(held.timer)
    held.stopJumps()
    held = undefined
  }
  const holdUntil = (at: number): void => {
    release()
    const timer = setTimeout(enqueue, at - now().getTime())
    ;(timer as { unref?: () => void }).unref?.()
    held = { timer, stopJumps: onClockJump(now, enqueue) }
  }

  async function sync(): Promise<'done'> {
    const current = informer.get(LEGACY_TOKEN_TRACKING_NAMESPACE, LEGACY_TOKEN_TRACKING_NAME)
    const at = now()
    if (!current) {
      if (at.getTime() < nextCreation) {
        holdUntil(nextCreation)
        return 'done'
      }
      release()
      await create(at)
      return 'done'
    }
    if (isDay(sinceOf(current))) return 'done'
    try {
      // Upstream's update from its informer's copy gives way to a newer write; read afresh, one with a date is kept.
      await store.update(LEGACY_TOKEN_TRACKING_NAMESPACE, LEGACY_TOKEN_TRACKING_NAME, (latest) => (isDay(sinceOf(latest)) ? latest : withSince(latest, utcDay(at))), writer(at))
    } catch (err) {
      // Deleted since the informer saw it: its event brings the ConfigMap back here.
      if (!hasStatusCode(err, 404)) throw err
    }
    return 'done'
  }

  async function create(at: Date): Promise<void> {
    const body = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: LEGACY_TOKEN_TRACKING_NAME, namespace: LEGACY_TOKEN_TRACKING_NAMESPACE },
      data: { [LEGACY_TOKEN_TRACKING_SINCE]: utcDay(at) },
    }
    try {
      await store.create(LEGACY_TOKEN_TRACKING_NAMESPACE, body, writer(at))
    } catch (err) {
      // Another server created it first: that spends the token as a creation of this one's would.
      if (err instanceof StatusError && err.reason === 'AlreadyExists') nextCreation = at.getTime() + CREATION_INTERVAL_MS
      else throw err // a failed creation spends nothing
      return
    }
    nextCreation = at.getTime() + CREATION_INTERVAL_MS
  }

  const follower = followInformer(informer, (_event, object) => {
    if (object.metadata.namespace === LEGACY_TOKEN_TRACKING_NAMESPACE && object.metadata.name === LEGACY_TOKEN_TRACKING_NAME) enqueue()
  })
  const firstSync = informer.synced.then(async () => {
    if (stopped) return
    queue.start()
    enqueue()
    await queue.whenDrained()
  })
  return {
    firstSync,
    stop() {
      stopped = true
      follower.stop()
      informer.stop()
      queue.stop()
      release()
    },
  }
}
