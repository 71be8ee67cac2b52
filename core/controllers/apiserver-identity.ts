/**
 * The server's identity lease (upstream's APIServerIdentity): a Lease
 * `apiserver-<hash>` in kube-system, labelled
 * `apiserver.kubernetes.io/identity: kube-apiserver`, renewed every ten
 * seconds for an hour's duration, so that clients and peers can count the
 * live servers of a cluster. Every server also deletes the identity leases
 * that expired (a server that is gone), as upstream's lease garbage
 * collector does.
 */
import { hasStatusCode } from '../machinery/status-error.js'
import type { Logger } from '../logging/logger.js'
import { LOOPBACK_IDENTITY } from '../machinery/identities.js'
import { parseLabelSelector } from '../machinery/label-selector.js'
import type { StoredResources } from './stored-resources.js'
import type { DirectWriteContext } from '../client/object-stores.js'
import { leases } from '../resources/groups/coordination.js'
import type { KubeObject } from '../machinery/object.js'
import { leaseExpiry, leaseRecord, microTime } from './lease-record.js'

export const IDENTITY_LABEL = 'apiserver.kubernetes.io/identity'
export const IDENTITY_LABEL_VALUE = 'kube-apiserver'
const NAMESPACE = 'kube-system'

export interface IdentityLeaseTimings {
  /** @default 3600 (upstream's) */
  durationSeconds: number
  /** @default 10000 */
  renewIntervalMs: number
  /** How often expired identity leases are looked for. @default 3600000 */
  gcPeriodMs: number
}

export const DEFAULT_IDENTITY_LEASE: IdentityLeaseTimings = { durationSeconds: 3600, renewIntervalMs: 10_000, gcPeriodMs: 3_600_000 }

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567'

function base32(bytes: Uint8Array): string {
  let bits = 0
  let value = 0
  let out = ''
  for (const byte of bytes) {
    value = (value << 8) | byte
    bits += 8
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31]
      bits -= 5
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31]
  return out
}

/**
 * The server's id, `apiserver-` and a hash, stable across restarts.
 * Upstream hashes the host name alone; the advertised address and secure
 * port are added here so that several servers on one host (a test cluster
 * on loopback addresses) stay apart, and the instance for the worker
 * processes of one daemon, which share all three.
 */
export async function apiServerId(hostname: string, advertiseAddress: string, securePort?: number, instance?: string): Promise<string> {
  // Without an instance the seed is what it always was: a server keeps its id across upgrades.
  const seed = [hostname, advertiseAddress, securePort ?? '', ...(instance ? [instance] : [])].join('|')
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(seed)))
  return `apiserver-${base32(digest.slice(0, 16))}`
}

function context(now: Date): DirectWriteContext {
  return { user: LOOPBACK_IDENTITY, now, dryRun: false }
}

export interface IdentityLeaseSettings extends IdentityLeaseTimings {
  /** `apiserver-<hash>`. */
  id: string
  /** `<id>_<uuid>`: this process. */
  holderIdentity: string
  hostname: string
  /** Annotations the lease carries (the peer proxy's advertised address). */
  annotations?: Record<string, string>
}

function leaseBody(s: IdentityLeaseSettings, at: Date): KubeObject {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name: s.id,
      namespace: NAMESPACE,
      labels: { [IDENTITY_LABEL]: IDENTITY_LABEL_VALUE, 'kubernetes.io/hostname': s.hostname },
      ...(s.annotations && Object.keys(s.annotations).length ? { annotations: s.annotations } : {}),
    },
    spec: { holderIdentity: s.holderIdentity, leaseDurationSeconds: s.durationSeconds, renewTime: microTime(at) },
  }
}

/** Keeps the lease renewed and collects expired ones; returns a stop function. */
export function startIdentityLease(stores: StoredResources, s: IdentityLeaseSettings, now: () => Date, logger: Logger): () => void {
  const store = stores.store(leases)
  const renew = async (): Promise<void> => {
    const at = now()
    const body = leaseBody(s, at)
    try {
      await store.update(NAMESPACE, s.id, (current) => ({ ...current, metadata: { ...current.metadata, labels: body.metadata.labels }, spec: body['spec'] }), context(at))
    } catch (err) {
      if (!hasStatusCode(err, 404)) throw err
      await store.create(NAMESPACE, body, context(at))
    }
  }
  const collect = async (): Promise<void> => {
    const list = await store.list(NAMESPACE, { labelSelector: parseLabelSelector(`${IDENTITY_LABEL}=${IDENTITY_LABEL_VALUE}`), allowWatchBookmarks: false })
    const t = now().getTime()
    for (const lease of list.items) {
      if (lease.metadata.name === s.id || leaseExpiry(lease) > t) continue
      // Only the expired version read: a server that renewed meanwhile keeps its lease.
      await store
        .delete(NAMESPACE, lease.metadata.name ?? '', { preconditions: { resourceVersion: lease.metadata.resourceVersion ?? '' } }, context(now()))
        .then(
          () => logger.info({ lease: lease.metadata.name, holder: leaseRecord(lease).holderIdentity }, 'deleted the expired identity lease of a server that is gone'),
          (err: unknown) => {
            if (!hasStatusCode(err, 404) && !hasStatusCode(err, 409)) throw err
          },
        )
    }
  }
  const renewLogged = () => renew().catch((err: unknown) => logger.warn({ lease: s.id, err: String(err) }, 'cannot renew the identity lease'))
  const collectLogged = () => collect().catch((err: unknown) => logger.warn({ err: String(err) }, 'cannot collect expired identity leases'))
  void renewLogged()
  void collectLogged()
  const renewTimer = setInterval(renewLogged, s.renewIntervalMs)
  const gcTimer = setInterval(collectLogged, s.gcPeriodMs)
  return () => {
    clearInterval(renewTimer)
    clearInterval(gcTimer)
  }
}
