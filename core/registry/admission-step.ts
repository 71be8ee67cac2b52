/**
 * The registry's mutating admission step: the attributes of one write handed
 * to the chain, which runs after managedFields are recorded and before the
 * strategy prepares and validates the object (upstream's handlers call it
 * between the field manager and the store).
 */
import type { AdmissionAttributes, AdmissionOperation, MutatingAdmission } from '../admission/mutating.js'
import type { ResourceEntry } from '../resources/catalogue.js'
import type { KubeObject } from '../resources/object.js'
import type { RequestContext } from './request-context.js'

export interface AdmissionStep {
  operation: AdmissionOperation
  object: KubeObject
  /** The stored object an update replaces. */
  old?: KubeObject
  subresource?: string
}

/** Runs `admission` on one write; returns the object to go on with. Its warnings go to `ctx`. */
export async function runMutatingAdmission(admission: MutatingAdmission, entry: ResourceEntry, step: AdmissionStep, ctx: RequestContext): Promise<KubeObject> {
  if (!admission.handles(step.operation)) return step.object
  const attributes: AdmissionAttributes = {
    operation: step.operation,
    entry,
    namespace: step.object.metadata.namespace ?? '',
    name: step.object.metadata.name ?? '',
    object: step.object,
    dryRun: ctx.dryRun,
    user: ctx.user,
    warnings: (ctx.warnings ??= []),
  }
  if (step.subresource) attributes.subresource = step.subresource
  if (step.old) attributes.oldObject = step.old
  await admission.admit(attributes)
  return attributes.object
}
