/**
 * The arithmetic and bookkeeping of a Deployment's rollout (upstream's
 * pkg/controller/deployment/util): surge and unavailability bounds, the
 * pod-template-hash, revisions and the annotations a ReplicaSet carries,
 * conditions, and the status computed from the ReplicaSets.
 */
import type { LabelSelectorObject } from '../../machinery/label-selector.js'
import type { KubeObject } from '../../machinery/object.js'
import { formatTimestamp } from '../../machinery/object.js'
import { sameJson } from '../../machinery/same-json.js'
import { intOrPercentValue } from '../../resources/apps/int-or-percent.js'

export const REVISION = 'deployment.kubernetes.io/revision'
export const REVISION_HISTORY = 'deployment.kubernetes.io/revision-history'
export const DESIRED_REPLICAS = 'deployment.kubernetes.io/desired-replicas'
export const MAX_REPLICAS = 'deployment.kubernetes.io/max-replicas'
export const POD_TEMPLATE_HASH = 'pod-template-hash'
const MAX_REVISION_HISTORY_CHARS = 2000
/** Annotations of a Deployment never copied to its ReplicaSets (upstream's skipCopyAnnotation). */
const NOT_COPIED = new Set([
  'kubectl.kubernetes.io/last-applied-configuration',
  REVISION,
  REVISION_HISTORY,
  DESIRED_REPLICAS,
  MAX_REPLICAS,
  'deprecated.deployment.rollback.to',
])

export interface PodTemplate {
  metadata?: { labels?: Record<string, string>; [field: string]: unknown }
  spec?: unknown
}

/** The spec fields of a Deployment and a ReplicaSet this controller reads. */
export interface WorkloadSpec {
  replicas?: number
  minReadySeconds?: number
  paused?: boolean
  revisionHistoryLimit?: number
  progressDeadlineSeconds?: number
  selector?: LabelSelectorObject
  template?: PodTemplate
  strategy?: { type?: string; rollingUpdate?: { maxSurge?: number | string; maxUnavailable?: number | string } }
}

/** The status of a Deployment or a ReplicaSet. */
export interface WorkloadStatus {
  replicas?: number
  fullyLabeledReplicas?: number
  updatedReplicas?: number
  readyReplicas?: number
  availableReplicas?: number
  unavailableReplicas?: number
  observedGeneration?: number
  collisionCount?: number
  conditions?: Condition[]
}

export const specOf = (o: KubeObject): WorkloadSpec => (o['spec'] as WorkloadSpec | undefined) ?? {}
export const statusOf = (o: KubeObject): WorkloadStatus => (o['status'] as WorkloadStatus | undefined) ?? {}
export const replicasOf = (o: KubeObject): number => specOf(o).replicas ?? 1

export const isRollingUpdate = (d: KubeObject): boolean => (specOf(d).strategy?.type ?? 'RollingUpdate') === 'RollingUpdate'

/** A count or a percentage of `total`, rounded up or down (upstream's GetScaledValueFromIntOrPercent). */
function scaled(value: unknown, total: number, roundUp: boolean): number {
  if (typeof value === 'string' && value.endsWith('%')) {
    const exact = (intOrPercentValue(value) * total) / 100
    return roundUp ? Math.ceil(exact) : Math.floor(exact)
  }
  return intOrPercentValue(value ?? 0)
}

/** maxSurge rounded up, maxUnavailable rounded down, and never both zero (upstream's ResolveFenceposts). */
export function fenceposts(d: KubeObject): { surge: number; unavailable: number } {
  const rolling = specOf(d).strategy?.rollingUpdate ?? {}
  const desired = replicasOf(d)
  const surge = scaled(rolling.maxSurge ?? '25%', desired, true)
  const unavailable = scaled(rolling.maxUnavailable ?? '25%', desired, false)
  return surge === 0 && unavailable === 0 ? { surge, unavailable: 1 } : { surge, unavailable }
}

export const maxSurge = (d: KubeObject): number => (isRollingUpdate(d) ? fenceposts(d).surge : 0)

export function maxUnavailable(d: KubeObject): number {
  if (!isRollingUpdate(d) || replicasOf(d) === 0) return 0
  return Math.min(fenceposts(d).unavailable, replicasOf(d))
}

const sum = (sets: readonly KubeObject[], count: (rs: KubeObject) => number): number => sets.reduce((n, rs) => n + count(rs), 0)
export const specReplicas = (sets: readonly KubeObject[]): number => sum(sets, replicasOf)
export const actualReplicas = (sets: readonly KubeObject[]): number => sum(sets, (rs) => statusOf(rs).replicas ?? 0)
export const readyReplicas = (sets: readonly KubeObject[]): number => sum(sets, (rs) => statusOf(rs).readyReplicas ?? 0)
export const availableReplicas = (sets: readonly KubeObject[]): number => sum(sets, (rs) => statusOf(rs).availableReplicas ?? 0)
export const active = (sets: readonly (KubeObject | undefined)[]): KubeObject[] => sets.filter((rs): rs is KubeObject => !!rs && replicasOf(rs) > 0)
export const byCreation = (a: KubeObject, b: KubeObject): number =>
  (Date.parse(a.metadata.creationTimestamp ?? '') || 0) - (Date.parse(b.metadata.creationTimestamp ?? '') || 0) || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '')

/** 32-bit FNV-1a over bytes. */
function fnv32a(bytes: Uint8Array, hash = 0x811c9dc5): number {
  for (const byte of bytes) hash = Math.imul(hash ^ byte, 0x01000193) >>> 0
  return hash
}

/** JSON with keys sorted at every level, so equal templates hash alike. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`
  return JSON.stringify(value)
}

const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789'

/**
 * The pod-template-hash: FNV-32a of the template and the collision count,
 * printed in decimal and encoded with upstream's SafeEncodeString alphabet.
 * Upstream hashes Go's debug print of the template struct, which this
 * server cannot reproduce: the values differ from a cluster's, their form
 * and their use are the same.
 */
export function podTemplateHash(template: unknown, collisionCount?: number): string {
  let hash = fnv32a(new TextEncoder().encode(canonicalJson(dropGoZeros(template))))
  if (collisionCount !== undefined) {
    const bytes = new Uint8Array(4)
    new DataView(bytes.buffer).setUint32(0, collisionCount >>> 0, true)
    hash = fnv32a(bytes, hash)
  }
  return [...String(hash)].map((c) => SAFE_ALPHABET[c.charCodeAt(0) % SAFE_ALPHABET.length]).join('')
}

/**
 * Plain (non-pointer) Go fields of a pod template whose zero value Go cannot
 * tell from absent. A template that came as protobuf carries them as false
 * or 0, the same template read back through JSON (as `kubectl rollout undo`
 * writes it) does not; Go's comparison sees no difference, nor must this one.
 */
const ZERO_IS_ABSENT = new Set(['stdin', 'stdinOnce', 'tty', 'hostNetwork', 'hostPID', 'hostIPC', 'hostPort'])

function dropGoZeros(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropGoZeros)
  if (!value || typeof value !== 'object') return value
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value)) if (!(ZERO_IS_ABSENT.has(k) && (v === false || v === 0))) out[k] = dropGoZeros(v)
  return out
}

function withoutHash(template: unknown): unknown {
  const copy = dropGoZeros(structuredClone(template ?? {})) as PodTemplate
  if (copy.metadata?.labels) {
    delete copy.metadata.labels[POD_TEMPLATE_HASH]
    if (!Object.keys(copy.metadata.labels).length) delete copy.metadata.labels
  }
  return copy
}

/** Whether two templates differ only in the pod-template-hash label (upstream's EqualIgnoreHash, with Go's blindness to zero plain fields). */
export const equalIgnoringHash = (a: unknown, b: unknown): boolean => sameJson(withoutHash(a), withoutHash(b))

const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

/**
 * A revision annotation's number as upstream reads it (a signed 64-bit
 * integer); undefined for text that is not one. A BigInt: revisions past
 * 2^53 (a ReplicaSet adopted with any revision its author chose) would lose
 * their last digits as a JavaScript number, and the next revision with them.
 */
export function parseRevision(text: string): bigint | undefined {
  if (!/^[+-]?\d+$/.test(text)) return undefined
  const revision = BigInt(text)
  return revision < INT64_MIN || revision > INT64_MAX ? undefined : revision
}

/** An object's revision; 0 without one or with one that does not parse (upstream's MaxRevision skips those). */
export function revisionOf(o: KubeObject): bigint {
  return parseRevision(o.metadata.annotations?.[REVISION] ?? '') ?? 0n
}

export const compareRevisions = (a: bigint, b: bigint): number => (a < b ? -1 : a > b ? 1 : 0)

/** The revision after every one of `replicaSets` (upstream's MaxRevision + 1). */
export function nextRevision(replicaSets: readonly KubeObject[]): bigint {
  let max = 0n
  for (const rs of replicaSets) {
    const revision = revisionOf(rs)
    if (revision > max) max = revision
  }
  return max + 1n
}

/** Copies the Deployment's annotations and sets the revision (keeping history on a rollback); answers whether anything changed. */
export function setNewReplicaSetAnnotations(d: KubeObject, rs: KubeObject, newRevision: bigint, exists: boolean): boolean {
  const annotations = (rs.metadata.annotations = { ...rs.metadata.annotations })
  let changed = false
  for (const [k, v] of Object.entries(d.metadata.annotations ?? {})) {
    if (NOT_COPIED.has(k) || annotations[k] === v) continue
    annotations[k] = v
    changed = true
  }
  const oldText = annotations[REVISION]
  const oldRevision = oldText ? parseRevision(oldText) : 0n
  // Upstream gives up on such a ReplicaSet here, the annotations it copied unwritten.
  if (oldRevision === undefined) return false
  if (oldRevision < newRevision) {
    annotations[REVISION] = String(newRevision)
    changed = true
    if (oldText !== undefined) {
      const history = annotations[REVISION_HISTORY] ? annotations[REVISION_HISTORY].split(',') : []
      history.push(oldText)
      while (history.join(',').length > MAX_REVISION_HISTORY_CHARS) history.shift()
      annotations[REVISION_HISTORY] = history.join(',')
    }
  }
  if (!exists && setReplicasAnnotations(rs, replicasOf(d), replicasOf(d) + maxSurge(d))) changed = true
  return changed
}

export function replicasAnnotationsNeedUpdate(rs: KubeObject, desired: number, max: number): boolean {
  const a = rs.metadata.annotations ?? {}
  return a[DESIRED_REPLICAS] !== String(desired) || a[MAX_REPLICAS] !== String(max)
}

export function setReplicasAnnotations(rs: KubeObject, desired: number, max: number): boolean {
  if (!replicasAnnotationsNeedUpdate(rs, desired, max)) return false
  rs.metadata.annotations = { ...rs.metadata.annotations, [DESIRED_REPLICAS]: String(desired), [MAX_REPLICAS]: String(max) }
  return true
}

export function annotatedNumber(rs: KubeObject, name: string): number | undefined {
  const text = rs.metadata.annotations?.[name]
  return text !== undefined && /^\d+$/.test(text) ? Number(text) : undefined
}

export interface Condition {
  type: string
  status: 'True' | 'False' | 'Unknown'
  lastUpdateTime?: string
  lastTransitionTime?: string
  reason: string
  message: string
}

export const conditionOf = (status: WorkloadStatus, type: string): Condition | undefined => (status.conditions ?? []).find((c) => c.type === type)

/** Upstream's SetDeploymentCondition: the same status and reason leaves it be; the same status keeps its transition time. */
export function setCondition(status: WorkloadStatus, condition: Omit<Condition, 'lastUpdateTime' | 'lastTransitionTime'>, now: Date): void {
  const current = conditionOf(status, condition.type)
  if (current && current.status === condition.status && current.reason === condition.reason) return
  const at = formatTimestamp(now)
  const next: Condition = { ...condition, lastUpdateTime: at, lastTransitionTime: current && current.status === condition.status ? (current.lastTransitionTime ?? at) : at }
  status.conditions = [...(status.conditions ?? []).filter((c) => c.type !== condition.type), next]
}

export function removeCondition(status: WorkloadStatus, type: string): void {
  const kept = (status.conditions ?? []).filter((c) => c.type !== type)
  if (kept.length) status.conditions = kept
  else delete status.conditions
}

const COUNTS = ['replicas', 'updatedReplicas', 'readyReplicas', 'availableReplicas', 'unavailableReplicas', 'observedGeneration'] as const

/** The status the ReplicaSets add up to (upstream's calculateStatus). */
export function calculateStatus(all: readonly KubeObject[], newRS: KubeObject | undefined, d: KubeObject, now: Date): WorkloadStatus {
  const available = availableReplicas(all)
  const status: WorkloadStatus = {
    ...(d.metadata.generation !== undefined ? { observedGeneration: d.metadata.generation } : {}),
    replicas: actualReplicas(all),
    updatedReplicas: newRS ? actualReplicas([newRS]) : 0,
    readyReplicas: readyReplicas(all),
    availableReplicas: available,
    unavailableReplicas: Math.max(0, specReplicas(all) - available),
  }
  const current = statusOf(d)
  if (current.collisionCount !== undefined) status.collisionCount = current.collisionCount
  if (current.conditions) status.conditions = structuredClone(current.conditions)
  if (available >= replicasOf(d) - maxUnavailable(d)) setCondition(status, { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', message: 'Deployment has minimum availability.' }, now)
  else setCondition(status, { type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable', message: 'Deployment does not have minimum availability.' }, now)
  // Zero counts are left out, as upstream's omitempty fields are.
  for (const key of COUNTS) if (!status[key]) delete status[key]
  return status
}

const progressDeadline = (d: KubeObject): number | undefined => {
  const seconds = specOf(d).progressDeadlineSeconds
  return seconds === undefined || seconds === 2147483647 ? undefined : seconds
}
export const hasProgressDeadline = (d: KubeObject): boolean => progressDeadline(d) !== undefined

/** Every replica updated and available, and the spec seen (upstream's DeploymentComplete). */
export function isComplete(d: KubeObject, status: WorkloadStatus): boolean {
  const want = replicasOf(d)
  return (status.updatedReplicas ?? 0) === want && (status.replicas ?? 0) === want && (status.availableReplicas ?? 0) === want && (status.observedGeneration ?? 0) >= (d.metadata.generation ?? 0)
}

/** Something moved since the last status (upstream's DeploymentProgressing). */
export function isProgressing(d: KubeObject, status: WorkloadStatus): boolean {
  const old = statusOf(d)
  const n = (s: WorkloadStatus, k: (typeof COUNTS)[number]): number => s[k] ?? 0
  return (
    n(status, 'updatedReplicas') > n(old, 'updatedReplicas') ||
    n(status, 'replicas') - n(status, 'updatedReplicas') < n(old, 'replicas') - n(old, 'updatedReplicas') ||
    n(status, 'readyReplicas') > n(old, 'readyReplicas') ||
    n(status, 'availableReplicas') > n(old, 'availableReplicas')
  )
}

/** Milliseconds until the progress deadline passes (negative once past), or undefined when there is none to watch. */
export function untilDeadline(d: KubeObject, status: WorkloadStatus, now: Date): number | undefined {
  const seconds = progressDeadline(d)
  const cond = conditionOf(status, 'Progressing')
  if (seconds === undefined || !cond || cond.reason === 'NewReplicaSetAvailable' || cond.reason === 'ProgressDeadlineExceeded') return undefined
  return Date.parse(cond.lastUpdateTime ?? '') + seconds * 1000 - now.getTime()
}

export function isTimedOut(d: KubeObject, status: WorkloadStatus, now: Date): boolean {
  if (!hasProgressDeadline(d)) return false
  const cond = conditionOf(status, 'Progressing')
  if (!cond || cond.reason === 'NewReplicaSetAvailable') return false
  if (cond.reason === 'ProgressDeadlineExceeded') return true
  return Date.parse(cond.lastUpdateTime ?? '') + (progressDeadline(d) ?? 0) * 1000 < now.getTime()
}
