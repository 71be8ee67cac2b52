/**
 * The registry's admission steps: the attributes of one request handed to
 * the chain. The mutating step runs after managedFields are recorded and
 * before the strategy prepares and validates the object (upstream's
 * handlers call it between the field manager and the store); the validating
 * step runs on the prepared, validated object right before the write, as
 * upstream's store calls its create, update and delete validation.
 */
import type { AdmissionAttributes, AdmissionOperation } from '../admission/attributes.js'
import type { MutatingAdmission } from '../admission/mutating.js'
import type { ValidatingAdmission } from '../admission/validating.js'
import type { ResourceEntry } from '../resources/catalogue.js'
import { cloneJson, type KubeObject } from '../machinery/object.js'
import type { RequestContext } from './request-context.js'

export interface AdmissionStep {
  operation: AdmissionOperation
  /** What the request would store; absent for a DELETE. */
  object?: KubeObject
  /** The stored object an update replaces or a delete removes. */
  old?: KubeObject
  subresource?: string
  /** Where the object is, when there is no object to say it (a DELETE). */
  namespace?: string
  name?: string
  /** The operation's options (DeleteOptions for a DELETE). */
  options?: Record<string, unknown>
}

function attributesOf(entry: ResourceEntry, step: AdmissionStep, ctx: RequestContext): AdmissionAttributes {
  const meta = step.object?.metadata ?? step.old?.metadata
  const attributes: AdmissionAttributes = {
    operation: step.operation,
    entry,
    namespace: step.namespace ?? meta?.namespace ?? '',
    name: step.name ?? meta?.name ?? '',
    dryRun: ctx.dryRun,
    user: ctx.user,
    warnings: (ctx.warnings ??= []),
  }
  if (step.object) attributes.object = step.object
  if (step.subresource) attributes.subresource = step.subresource
  if (step.old) attributes.oldObject = step.old
  if (step.options) attributes.options = step.options
  if (ctx.auditAnnotations) attributes.auditAnnotations = ctx.auditAnnotations
  return attributes
}

/**
 * Runs the mutating chain on one request; returns the object to go on with.
 * Its warnings go to `ctx`. Skipped for the inner writes of a subresource (`ctx.admission` false).
 */
export async function runMutatingAdmission<T extends KubeObject | undefined>(
  admission: MutatingAdmission,
  entry: ResourceEntry,
  step: AdmissionStep & { object: T },
  ctx: RequestContext,
): Promise<T> {
  if (ctx.admission === false || !admission.handles(step.operation)) return step.object
  const attributes = attributesOf(entry, step, ctx)
  await admission.admit(attributes)
  return attributes.object as T
}

/**
 * Runs the validating chain on one request. The plugins see copies, so that
 * nothing they do reaches what is stored (upstream hands them a deep copy).
 * Each copy is made when a plugin first reads it: most writes meet no
 * plugin that looks at the object (no policy, no webhook configured for
 * the resource), and those then pay for no copy.
 */
export async function runValidatingAdmission(
  admission: ValidatingAdmission,
  entry: ResourceEntry,
  step: AdmissionStep,
  ctx: RequestContext,
): Promise<void> {
  if (ctx.admission === false || !admission.handles(step.operation)) return
  const attributes = attributesOf(entry, step, ctx)
  if (step.object) copiedOnFirstRead(attributes, 'object', step.object)
  if (step.old) copiedOnFirstRead(attributes, 'oldObject', step.old)
  await admission.validate(attributes)
}

/** `attributes[field]` becomes a deep copy of `source`, made on its first read; every later read sees that one copy. */
function copiedOnFirstRead(attributes: AdmissionAttributes, field: 'object' | 'oldObject', source: KubeObject): void {
  let copy: KubeObject | undefined
  let made = false
  Object.defineProperty(attributes, field, {
    enumerable: true,
    configurable: true,
    get: () => {
      if (!made) {
        copy = cloneJson(source)
        made = true
      }
      return copy
    },
    set: (value: KubeObject | undefined) => {
      copy = value
      made = true
    },
  })
}
