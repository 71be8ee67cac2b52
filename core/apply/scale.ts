/**
 * managedFields through the scale subresource, as upstream's ScaleHandler
 * keeps them: the Scale's field manager sees each parent entry that owns the
 * replicas field as owning `spec.replicas` of an autoscaling/v1 Scale, records
 * the write there under the `scale` subresource, and the result is folded back
 * into the parent's entries: a manager that took the replicas through the
 * Scale owns the parent's replicas field, the entries it took them from keep
 * the rest.
 */
import { FieldSet } from './fieldset.js'
import { decodeManagedFields, decodeOrEmpty, encodeManagedFields, type Managed, type ManagedFieldsEntry } from './managed.js'
import type { Path } from './path.js'
import { updateManagedFields } from './update.js'

const SCALE_API_VERSION = 'autoscaling/v1'
const SCALE_TYPE = 'io.k8s.api.autoscaling.v1.Scale'
const REPLICAS_IN_SCALE: Path = [{ field: 'spec' }, { field: 'replicas' }]

export interface ScaleWrite {
  /** The parent's entries before the write. */
  parentEntries: unknown
  /** group/version the parent is served as, e.g. `apps/v1`. */
  parentApiVersion: string
  /** Where the parent keeps the replicas a Scale shows (`spec.replicas`, or a custom resource's path). */
  replicasPath: Path
  oldReplicas: unknown
  newReplicas: unknown
  manager: string
  now: Date
}

/**
 * The parent entries that own the replicas, as the Scale's entries. They are
 * encoded, so that reading them back names their managers with the Scale's
 * apiVersion, as upstream's round trip through the wire form does.
 */
function toSubresource(parent: Managed, replicasPath: Path): ManagedFieldsEntry[] {
  const scale: Managed = new Map()
  for (const [id, vs] of parent) {
    if (vs.set.has(replicasPath)) scale.set(id, { set: FieldSet.of(REPLICAS_IN_SCALE), apiVersion: SCALE_API_VERSION, applied: vs.applied, time: vs.time })
  }
  return encodeManagedFields(scale)
}

/**
 * The Scale's entries folded into the parent's: a parent entry the Scale
 * manager took the replicas from loses them (and goes when nothing is left);
 * each Scale manager that owns the replicas gets the parent's replicas field,
 * with the time the parent had for it (none for a new one, as upstream).
 */
function toParent(parent: Managed, scaleEntries: ManagedFieldsEntry[], write: ScaleWrite): ManagedFieldsEntry[] {
  const scale = decodeManagedFields(scaleEntries)
  const replicas = FieldSet.of(write.replicasPath)
  const out: Managed = new Map()
  for (const [id, vs] of parent) {
    if (!vs.set.has(write.replicasPath)) {
      out.set(id, vs)
    } else if (scale.has(id)) {
      out.set(id, vs)
      scale.delete(id)
    } else {
      const set = vs.set.difference(replicas)
      if (!set.isEmpty()) out.set(id, { ...vs, set })
    }
  }
  for (const [id, vs] of scale) {
    if (!vs.set.has(REPLICAS_IN_SCALE)) continue
    out.set(id, { set: replicas, apiVersion: write.parentApiVersion, applied: vs.applied, time: parent.get(id)?.time })
  }
  return encodeManagedFields(out)
}

/** The parent's managedFields after a write through its scale subresource. */
export function scaleManagedFields(write: ScaleWrite): ManagedFieldsEntry[] {
  const parent = decodeOrEmpty(write.parentEntries)
  const scaleObject = (replicas: unknown, managedFields?: ManagedFieldsEntry[]): Record<string, unknown> => ({
    apiVersion: SCALE_API_VERSION,
    kind: 'Scale',
    metadata: managedFields ? { managedFields } : {},
    spec: replicas === undefined ? {} : { replicas },
  })
  const scaleEntries = updateManagedFields(scaleObject(write.oldReplicas, toSubresource(parent, write.replicasPath)), scaleObject(write.newReplicas), write.manager, {
    now: write.now,
    apiVersion: SCALE_API_VERSION,
    typeName: SCALE_TYPE,
    subresource: 'scale',
  })
  return toParent(parent, scaleEntries, write)
}
