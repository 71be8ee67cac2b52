/**
 * A StatefulSet's ControllerRevisions (upstream's controller/history as the
 * StatefulSet controller uses it): each revision holds the pod template as
 * a patch that replaces `spec.template`, is named `<set>-<hash>`, labelled
 * with the template's labels and `controller.kubernetes.io/hash`, carries
 * the set's annotations and is controlled by the set.
 *
 * The hash is upstream's: 32-bit FNV-1 over the patch as Go's encoding/json
 * writes it (keys sorted, `<`, `>` and `&` escaped), then over the collision
 * count in decimal, printed in decimal and encoded in the safe alphabet. It
 * equals a cluster's as far as the stored template encodes as a cluster's
 * does (the API server's defaults applied, the same fields present).
 */
import type { KubeObject } from '../../machinery/object.js'
import { controllerRefTo } from './owned.js'

export const REVISION_HASH_LABEL = 'controller.kubernetes.io/hash'
const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789'
/** Upstream keeps the name a valid label value once the hash is added. */
const MAX_PREFIX = 223

export interface PodTemplate {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string>; finalizers?: string[]; [field: string]: unknown }
  spec?: Record<string, unknown>
}

function goString(text: string): string {
  return JSON.stringify(text).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

/** A value as Go's json.Marshal writes a decoded `map[string]interface{}`: keys sorted at every level. */
export function goJson(value: unknown): string {
  if (value === null || value === undefined) return 'null'
  if (Array.isArray(value)) return `[${value.map(goJson).join(',')}]`
  if (typeof value === 'string') return goString(value)
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined)
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${goString(k)}:${goJson(v)}`).join(',')}}`
  }
  return JSON.stringify(value)
}

/** FNV-1 (multiply, then xor), 32 bits: Go's fnv.New32, where the Deployment's hash uses New32a. */
export function fnv32(bytes: Uint8Array, hash = 0x811c9dc5): number {
  for (const byte of bytes) hash = (Math.imul(hash, 0x01000193) ^ byte) >>> 0
  return hash
}

export function revisionHash(data: unknown, collisionCount: number): string {
  const encoder = new TextEncoder()
  let hash = fnv32(encoder.encode(goJson(data)))
  hash = fnv32(encoder.encode(String(collisionCount)), hash)
  return [...String(hash)].map((c) => SAFE_ALPHABET[c.charCodeAt(0) % SAFE_ALPHABET.length]).join('')
}

/**
 * The patch a revision stores: the template as the apps/v1 encoding writes
 * it (its metadata always present, a zero creationTimestamp as null) under
 * `spec.template`, marked to replace.
 */
export function templatePatch(template: PodTemplate | undefined): Record<string, unknown> {
  const copy = structuredClone(template ?? {}) as Record<string, unknown>
  const metadata = (copy['metadata'] ?? {}) as Record<string, unknown>
  copy['metadata'] = { creationTimestamp: null, ...metadata }
  copy['$patch'] = 'replace'
  return { spec: { template: copy } }
}

/** The template a revision restores (upstream's ApplyRevision, which only replaces the template). */
export function templateOf(revision: KubeObject): PodTemplate {
  const data = revision['data'] as { spec?: { template?: Record<string, unknown> } } | undefined
  const template = structuredClone(data?.spec?.template ?? {})
  delete template['$patch']
  const metadata = template['metadata'] as Record<string, unknown> | undefined
  if (metadata && metadata['creationTimestamp'] === null) delete metadata['creationTimestamp']
  return template as PodTemplate
}

export const revisionNumber = (revision: KubeObject): number => Number(revision['revision'] ?? 0) || 0

/** The revision the set's template makes, numbered `revision`, named with the hash for `collisionCount`. */
export function newRevision(set: KubeObject, template: PodTemplate | undefined, revision: number, collisionCount: number): KubeObject {
  const data = templatePatch(template)
  const hash = revisionHash(data, collisionCount)
  const annotations = set.metadata.annotations ?? {}
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: revisionName(set.metadata.name ?? '', hash),
      namespace: set.metadata.namespace ?? '',
      labels: { ...(template?.metadata?.labels ?? {}), [REVISION_HASH_LABEL]: hash },
      ...(Object.keys(annotations).length ? { annotations: { ...annotations } } : {}),
      ownerReferences: [controllerRefTo(set)],
    },
    data,
    revision,
  }
}

export const revisionName = (setName: string, hash: string): string => `${setName.slice(0, MAX_PREFIX)}-${hash}`

/** Upstream's EqualRevision: the same stored patch. */
export const sameRevision = (a: KubeObject, b: KubeObject): boolean => goJson(a['data']) === goJson(b['data'])
