/**
 * Coordinated leader election (upstream's CoordinatedLeaderElection, with
 * the OldestEmulationVersion strategy): every server publishes a
 * LeaseCandidate for the controllers' lease with its binary and emulated
 * versions, and one server (elected the ordinary way on its own lease, as
 * upstream's coordinator) writes the controllers' lease for the best live
 * candidate: the oldest emulated version, then the oldest binary version,
 * then the longest-standing candidate. A better candidate that appears
 * while another holds the lease is named its preferredHolder; the holder
 * steps down and the coordinator hands the lease on.
 *
 * Upstream's coordinator pings candidates before an election; here each
 * candidate renews its LeaseCandidate every interval instead, and one not
 * renewed for three intervals is no longer a candidate (and is deleted).
 */
import { hasStatusCode } from '../machinery/status-error.js'
import type { Logger } from '../logging/logger.js'
import { LOOPBACK_IDENTITY } from '../machinery/identities.js'
import type { StoredResources } from './stored-resources.js'
import type { DirectWriteContext } from '../client/object-stores.js'
import { record, text } from '../resources/columns/values.js'
import { compareSemver, OLDEST_EMULATION_VERSION, parseSemver } from '../resources/coordination/lease-candidate-rules.js'
import { leaseCandidates, leases } from '../resources/groups/coordination.js'
import type { KubeObject } from '../machinery/object.js'
import { LEADER_ELECTION_NAMESPACE } from './leader-election.js'
import { leaseExpiry, leaseRecord, microTime } from './lease-record.js'

/** The lease the coordinator itself is elected on (upstream's controller name). */
export const COORDINATOR_LEASE = 'leader-election-controller'

const ns = LEADER_ELECTION_NAMESPACE
const context = (now: Date): DirectWriteContext => ({ user: LOOPBACK_IDENTITY, now, dryRun: false })
const notFoundIsUndefined = (err: unknown): undefined => {
  if (hasStatusCode(err, 404)) return undefined
  throw err
}

export interface CandidateSettings {
  /** The candidate's name, which is also the holder identity it leads under. */
  identity: string
  leaseName: string
  binaryVersion: string
  emulationVersion: string
  renewIntervalMs: number
}

/** Publishes and renews this server's LeaseCandidate; the returned function deletes it. */
export function startLeaseCandidate(stores: StoredResources, s: CandidateSettings, now: () => Date, logger: Logger): () => Promise<void> {
  const store = stores.store(leaseCandidates)
  const spec = (at: Date) => ({
    leaseName: s.leaseName,
    binaryVersion: s.binaryVersion,
    emulationVersion: s.emulationVersion,
    strategy: OLDEST_EMULATION_VERSION,
    renewTime: microTime(at),
  })
  const renew = async (): Promise<void> => {
    const at = now()
    const updated = await store.update(ns, s.identity, (current) => ({ ...current, spec: { ...record(current['spec']), ...spec(at) } }), context(at)).catch(notFoundIsUndefined)
    if (updated) return
    const body: KubeObject = { apiVersion: 'coordination.k8s.io/v1alpha2', kind: 'LeaseCandidate', metadata: { name: s.identity, namespace: ns }, spec: spec(at) }
    await store.create(ns, body, context(at)).catch((err: unknown) => {
      if (!hasStatusCode(err, 409)) throw err
    })
  }
  const renewLogged = () => renew().catch((err: unknown) => logger.warn({ err: String(err) }, 'cannot renew the lease candidate'))
  void renewLogged()
  const timer = setInterval(renewLogged, s.renewIntervalMs)
  return async () => {
    clearInterval(timer)
    await store.delete(ns, s.identity, {}, context(now())).catch((err: unknown) => {
      if (!hasStatusCode(err, 404)) logger.warn({ err: String(err) }, 'cannot delete the lease candidate')
    })
  }
}

interface Candidate {
  name: string
  emulation: [number, number, number]
  binary: [number, number, number]
  created: number
}

function readCandidate(obj: KubeObject): Candidate | undefined {
  const spec = record(obj['spec'])
  const emulation = parseSemver(text(spec['emulationVersion']))
  const binary = parseSemver(text(spec['binaryVersion']))
  if (!emulation || !binary || !obj.metadata.name) return undefined
  return { name: obj.metadata.name, emulation, binary, created: Date.parse(obj.metadata.creationTimestamp ?? '') || 0 }
}

/** Negative when `a` should lead rather than `b`. */
export function compareCandidates(a: Candidate, b: Candidate): number {
  return compareSemver(a.emulation, b.emulation) || compareSemver(a.binary, b.binary) || a.created - b.created
}

export interface CoordinatorSettings {
  leaseName: string
  leaseDurationSeconds: number
  /** Between two looks at the candidates and the lease. */
  periodMs: number
  /** A candidate not renewed for this long is gone. */
  candidateValidityMs: number
}

/** One pass of the coordinator: the lease given to, or its preferred holder set to, the best live candidate. */
export async function coordinateOnce(stores: StoredResources, s: CoordinatorSettings, now: () => Date, logger: Logger): Promise<void> {
  const at = now()
  const t = at.getTime()
  const candidateStore = stores.store(leaseCandidates)
  const all = (await candidateStore.list(ns, { allowWatchBookmarks: false })).items
  const live: Candidate[] = []
  for (const obj of all) {
    if (text(record(obj['spec'])['leaseName']) !== s.leaseName) continue
    const renewed = Date.parse(text(record(obj['spec'])['renewTime']))
    if (!(renewed + s.candidateValidityMs > t)) {
      // Upstream's lease candidate garbage collection.
      await candidateStore.delete(ns, obj.metadata.name ?? '', { preconditions: { resourceVersion: obj.metadata.resourceVersion ?? '' } }, context(at)).catch(() => {})
      continue
    }
    const c = readCandidate(obj)
    if (c) live.push(c)
  }
  const best = live.reduce<Candidate | undefined>((b, c) => (!b || compareCandidates(c, b) < 0 ? c : b), undefined)
  if (!best) return
  const leaseStore = stores.store(leases)
  const current = await leaseStore.get(ns, s.leaseName).catch(notFoundIsUndefined)
  const granted = (transitions: number) => ({
    holderIdentity: best.name,
    leaseDurationSeconds: s.leaseDurationSeconds,
    acquireTime: microTime(at),
    renewTime: microTime(at),
    leaseTransitions: transitions,
    strategy: OLDEST_EMULATION_VERSION,
  })
  if (!current) {
    const body: KubeObject = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: s.leaseName, namespace: ns }, spec: granted(0) }
    await leaseStore.create(ns, body, context(at)).catch((err: unknown) => {
      if (!hasStatusCode(err, 409)) throw err
    })
    logger.info({ lease: `${ns}/${s.leaseName}`, holder: best.name }, 'coordinated leader election: lease granted')
    return
  }
  const rec = leaseRecord(current)
  const spec = record(current['spec'])
  const expired = rec.holderIdentity === '' || leaseExpiry(current) <= t
  const readVersion = current.metadata.resourceVersion
  const pinned = (fresh: KubeObject) => ({ ...fresh, metadata: { ...fresh.metadata, resourceVersion: readVersion } })
  if (expired) {
    if (rec.holderIdentity === best.name && text(spec['renewTime'])) return
    const { preferredHolder: _dropped, ...rest } = spec
    await leaseStore
      .update(ns, s.leaseName, (fresh) => ({ ...pinned(fresh), spec: { ...rest, ...granted(rec.leaseTransitions + 1) } }), context(at))
      .catch((err: unknown) => {
        if (!hasStatusCode(err, 409)) throw err
      })
    logger.info({ lease: `${ns}/${s.leaseName}`, holder: best.name }, 'coordinated leader election: lease granted')
    return
  }
  const holder = live.find((c) => c.name === rec.holderIdentity)
  const better = rec.holderIdentity !== best.name && (!holder || compareCandidates(best, holder) < 0)
  if (better && text(spec['preferredHolder']) !== best.name) {
    await leaseStore
      .update(ns, s.leaseName, (fresh) => ({ ...pinned(fresh), spec: { ...record(fresh['spec']), strategy: OLDEST_EMULATION_VERSION, preferredHolder: best.name } }), context(at))
      .catch((err: unknown) => {
        if (!hasStatusCode(err, 409)) throw err
      })
    logger.info({ lease: `${ns}/${s.leaseName}`, holder: rec.holderIdentity, preferred: best.name }, 'coordinated leader election: a better candidate is preferred')
  }
}

/** Runs `coordinateOnce` every period; the returned function stops it. */
export function startCoordinator(stores: StoredResources, s: CoordinatorSettings, now: () => Date, logger: Logger): () => void {
  let running = false
  const tick = () => {
    if (running) return
    running = true
    coordinateOnce(stores, s, now, logger)
      .catch((err: unknown) => logger.warn({ err: String(err) }, 'coordinated leader election: cannot elect'))
      .finally(() => (running = false))
  }
  tick()
  const timer = setInterval(tick, s.periodMs)
  return () => clearInterval(timer)
}
