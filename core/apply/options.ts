/**
 * What both entry points need to know about the request: the served type,
 * the endpoint (main resource or a subresource), and which fields that
 * endpoint never gives ownership of.
 */
import { type FieldPrefix, FieldSet } from './fieldset.js'
import { isNamedField, shapeOfType, zeroValue, type Shape } from './typed.js'
import type { UpdaterContext } from './updater.js'

export interface ManagedFieldsOptions {
  /** the endpoint written through: undefined for the main resource, `status`, `scale` ... */
  subresource?: string
  /** the operation's time, recorded in the manager's entry */
  now: Date
  /** group/version the request was served as, e.g. `apps/v1` */
  apiVersion: string
  /** definition name of the served type, e.g. `io.k8s.api.apps.v1.Deployment` */
  typeName: string
  /**
   * The structure of a type the tables do not hold (a custom resource's
   * schema, see apply/crd-shape.ts); when given, typeName only names the type.
   * @default the type tables' entry for typeName
   */
  shape?: Shape
  /**
   * Fields the strategy resets for this endpoint, owned by nobody through it.
   * @default `status` on the main resource, `spec` on the status subresource
   */
  resetFields?: FieldSet
  /**
   * The only fields this endpoint gives ownership of, when its strategy
   * keeps nothing else of a write (pods/resize: the containers' resources).
   * @default every field but the reset ones
   */
  ownedOnly?: readonly FieldPrefix[]
  /**
   * The object is large (megabytes): each pass over it checkpoints within
   * itself too, so that a caller running the steps in slices lets other
   * requests in during the pass. An ordinary object's passes run at once,
   * without the cost of checkpoints.
   */
  inSteps?: boolean
}

/** Upstream's common reset fields: status through the main resource, spec through status. */
export function defaultResetFields(shape: Shape, subresource: string | undefined): FieldSet {
  const has = (name: string): boolean => isNamedField(shape, name)
  if (subresource === undefined && has('status')) return FieldSet.of([{ field: 'status' }])
  if (subresource === 'status' && has('spec')) return FieldSet.of([{ field: 'spec' }])
  return FieldSet.empty()
}

export function contextFor(opts: ManagedFieldsOptions): UpdaterContext {
  const shape = opts.shape ?? shapeOfType(opts.typeName)
  return {
    shape,
    apiVersion: opts.apiVersion,
    ignored: opts.resetFields ?? defaultResetFields(shape, opts.subresource),
    ownedOnly: opts.ownedOnly,
    inSteps: opts.inSteps ?? false,
  }
}

/**
 * What a created object is compared against: Go's zero value of a built-in
 * type; for a type given by its schema, the empty object upstream creates
 * for unstructured kinds (its apiVersion and kind are never owned anyway).
 */
export function emptyObjectFor(opts: ManagedFieldsOptions): Record<string, unknown> {
  return opts.shape ? {} : zeroValue(opts.typeName)
}

/** A copy of the object without metadata.managedFields (never part of a comparison). */
export function withoutManagedFields(obj: unknown): Record<string, unknown> {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) return {}
  const copy = { ...(obj as Record<string, unknown>) }
  const meta = copy['metadata']
  if (meta !== null && typeof meta === 'object' && !Array.isArray(meta) && 'managedFields' in meta) {
    const { managedFields: _dropped, ...rest } = meta as Record<string, unknown>
    copy['metadata'] = rest
  }
  return copy
}

export function managedFieldsOf(obj: unknown): unknown {
  const meta = (obj as { metadata?: { managedFields?: unknown } } | undefined)?.metadata
  return meta?.managedFields
}
