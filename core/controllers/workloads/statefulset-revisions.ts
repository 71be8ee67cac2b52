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
import { goJson, type PodTemplate, templatePatch } from './revision-patch.js'

export const REVISION_HASH_LABEL = 'controller.kubernetes.io/hash'
const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789'
/** Upstream keeps the name a valid label value once the hash is added. */
const MAX_PREFIX = 223

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
