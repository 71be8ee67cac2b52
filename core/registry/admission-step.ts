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
import { cloneJson, cloneJsonInSteps, type KubeObject } from '../machinery/object.js'
import { isMarkedLarge } from '../machinery/large-objects.js'
import { runInSlices } from '../machinery/time-slice.js'
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

/**
 * How admission sees an update through a subresource whose object is of
 * another kind than the resource's: a Scale, as upstream's scale storage
 * admits one (its updated-object chain mutates the Scale, its validation
 * funcs are handed Scales made from the new and the stored object). The
 * caller runs the mutating phase on that object in the update's `next`
 * (ResourceStore.admitAsSubresource), so the store runs none on the
 * resource; the validating phase sees `view` of the new and the stored object.
 */
export interface AdmittedAs {
  view(obj: KubeObject): KubeObject
}

/** The request's attributes; without `withObjects`, its object and the old one left out (for CopyingAttributes). */
function attributesOf(entry: ResourceEntry, step: AdmissionStep, ctx: RequestContext, withObjects = true): AdmissionAttributes {
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
  if (withObjects && step.object) attributes.object = step.object
  if (step.subresource) attributes.subresource = step.subresource
  if (withObjects && step.old) attributes.oldObject = step.old
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
  const [object, old] = [await copiedAhead(step.object), await copiedAhead(step.old)]
  await admission.validate(new CopyingAttributes(attributesOf(entry, step, ctx, false), object, old))
}

/**
 * A large object (megabytes: a pod of a million containers) is copied ahead,
 * in slices, rather than in one piece on a plugin's first read: the built-in
 * plugins read every pod. Others wait for that read.
 */
async function copiedAhead(obj: KubeObject | undefined): Promise<CopiedOnFirstRead> {
  return obj && isMarkedLarge(obj) ? CopiedOnFirstRead.copy(await runInSlices(cloneJsonInSteps(obj))) : new CopiedOnFirstRead(obj)
}

/**
 * Attributes whose `object` and `oldObject` are deep copies of the request's, each made on its first read; every
 * later read sees that one copy. The accessors are the class's, not each object's: accessors defined on every
 * attributes object (over its data properties) gave each one a hidden class of its own under Node 20's V8, some
 * 1.5 µs a write and a dictionary lookup for every field a plugin read.
 */
class CopyingAttributes implements AdmissionAttributes {
  readonly operation: AdmissionAttributes['operation']
  readonly entry: ResourceEntry
  readonly subresource: string | undefined
  readonly namespace: string
  readonly name: string
  readonly options: Record<string, unknown> | undefined
  readonly dryRun: boolean
  readonly user: AdmissionAttributes['user']
  readonly warnings: string[]
  readonly auditAnnotations: Record<string, string> | undefined
  readonly #object: CopiedOnFirstRead
  readonly #oldObject: CopiedOnFirstRead

  constructor(base: AdmissionAttributes, object: CopiedOnFirstRead, oldObject: CopiedOnFirstRead) {
    this.operation = base.operation
    this.entry = base.entry
    this.subresource = base.subresource
    this.namespace = base.namespace
    this.name = base.name
    this.options = base.options
    this.dryRun = base.dryRun
    this.user = base.user
    this.warnings = base.warnings
    this.auditAnnotations = base.auditAnnotations
    this.#object = object
    this.#oldObject = oldObject
  }

  get object(): KubeObject | undefined {
    return this.#object.read()
  }

  set object(value: KubeObject | undefined) {
    this.#object.replace(value)
  }

  get oldObject(): KubeObject | undefined {
    return this.#oldObject.read()
  }

  set oldObject(value: KubeObject | undefined) {
    this.#oldObject.replace(value)
  }
}

/** An object whose deep copy is made at its first read; every later read sees that one copy, until one is set. */
class CopiedOnFirstRead {
  #copied = false

  constructor(private value: KubeObject | undefined) {}

  /** One holding a copy made already. */
  static copy(made: KubeObject): CopiedOnFirstRead {
    const held = new CopiedOnFirstRead(made)
    held.#copied = true
    return held
  }

  read(): KubeObject | undefined {
    if (!this.#copied) {
      this.value = this.value && cloneJson(this.value)
      this.#copied = true
    }
    return this.value
  }

  replace(value: KubeObject | undefined): void {
    this.value = value
    this.#copied = true
  }
}
