/**
 * The metadata rules every resource shares (upstream's ValidateObjectMeta and
 * ValidateObjectMetaUpdate), worded as upstream words them.
 */
import type { ResourceEntry } from '../resources/catalogue.js'
import { isPlainObject, type KubeObject } from '../resources/object.js'
import {
  type FieldError,
  type FieldPath,
  fieldPath,
  forbiddenField,
  invalid,
  required,
  typeInvalid,
} from './field.js'
import { isDNS1123Label, isQualifiedName, isValidLabelValue } from './names.js'

const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024

function validateStringMap(
  value: unknown,
  path: FieldPath,
  checkValue: ((v: string) => string[]) | undefined,
): FieldError[] {
  if (value === undefined || value === null) return []
  if (!isPlainObject(value)) return [typeInvalid(path, value, 'must be a map of string to string')]
  const errs: FieldError[] = []
  for (const [k, v] of Object.entries(value)) {
    for (const msg of isQualifiedName(k)) errs.push(invalid(path, k, msg))
    if (typeof v !== 'string') {
      errs.push(typeInvalid(path.key(k), v, 'must be a string'))
      continue
    }
    if (checkValue) for (const msg of checkValue(v)) errs.push(invalid(path.key(k), v, msg))
  }
  return errs
}

export function validateLabels(labels: unknown, path: FieldPath): FieldError[] {
  return validateStringMap(labels, path, isValidLabelValue)
}

export function validateAnnotations(annotations: unknown, path: FieldPath): FieldError[] {
  const errs = validateStringMap(annotations, path, undefined)
  if (isPlainObject(annotations)) {
    let size = 0
    for (const [k, v] of Object.entries(annotations)) size += k.length + (typeof v === 'string' ? v.length : 0)
    if (size > TOTAL_ANNOTATION_SIZE_LIMIT)
      errs.push({
        type: 'FieldValueTooLong',
        field: String(path),
        detail: `may not be more than ${TOTAL_ANNOTATION_SIZE_LIMIT} bytes`,
      })
  }
  return errs
}

function validateOwnerReferences(refs: unknown, path: FieldPath): FieldError[] {
  if (refs === undefined || refs === null) return []
  if (!Array.isArray(refs)) return [typeInvalid(path, refs, 'must be a list')]
  const errs: FieldError[] = []
  let controllers = 0
  refs.forEach((ref, i) => {
    const p = path.index(i)
    if (!isPlainObject(ref)) {
      errs.push(typeInvalid(p, ref, 'must be an object'))
      return
    }
    for (const f of ['apiVersion', 'kind', 'name', 'uid'] as const) {
      if (typeof ref[f] !== 'string' || ref[f] === '') errs.push(required(p.child(f), `${f} must not be empty`))
    }
    if (ref['controller'] === true) controllers++
  })
  if (controllers > 1) errs.push(invalid(path, refs, 'Only one reference can have Controller set to true'))
  return errs
}

function validateFinalizers(finalizers: unknown, path: FieldPath): FieldError[] {
  if (finalizers === undefined || finalizers === null) return []
  if (!Array.isArray(finalizers)) return [typeInvalid(path, finalizers, 'must be a list of strings')]
  const errs: FieldError[] = []
  finalizers.forEach((f, i) => {
    if (typeof f !== 'string') errs.push(typeInvalid(path.index(i), f, 'must be a string'))
    else for (const msg of isQualifiedName(f)) errs.push(invalid(path.index(i), f, msg))
  })
  return errs
}

/** Name, namespace, labels, annotations, owner references and finalizers of a new object. */
export function validateObjectMeta(obj: KubeObject, entry: ResourceEntry): FieldError[] {
  const meta = obj.metadata
  const path = fieldPath('metadata')
  const errs: FieldError[] = []
  if (!meta.name) {
    if (!meta.generateName) errs.push(required(path.child('name'), 'name or generateName is required'))
  } else {
    for (const msg of entry.validateName(meta.name)) errs.push(invalid(path.child('name'), meta.name, msg))
  }
  if (entry.namespaced) {
    if (!meta.namespace) errs.push(required(path.child('namespace')))
    else for (const msg of isDNS1123Label(meta.namespace)) errs.push(invalid(path.child('namespace'), meta.namespace, msg))
  } else if (meta.namespace) {
    errs.push(forbiddenField(path.child('namespace'), 'not allowed on this type'))
  }
  if (meta.generation !== undefined && meta.generation < 0)
    errs.push(invalid(path.child('generation'), meta.generation, 'must be greater than or equal to 0'))
  errs.push(...validateLabels(meta.labels, path.child('labels')))
  errs.push(...validateAnnotations(meta.annotations, path.child('annotations')))
  errs.push(...validateOwnerReferences(meta.ownerReferences, path.child('ownerReferences')))
  errs.push(...validateFinalizers(meta.finalizers, path.child('finalizers')))
  return errs
}

function immutable(path: FieldPath, value: unknown, old: unknown): FieldError[] {
  if (value === old) return []
  return [invalid(path, value ?? '', 'field is immutable')]
}

/** Everything validateObjectMeta checks, plus the fields an update may not change. */
export function validateObjectMetaUpdate(obj: KubeObject, old: KubeObject, entry: ResourceEntry): FieldError[] {
  const path = fieldPath('metadata')
  const m = obj.metadata
  const o = old.metadata
  return [
    ...validateObjectMeta(obj, entry),
    ...immutable(path.child('name'), m.name, o.name),
    ...immutable(path.child('namespace'), m.namespace, o.namespace),
    ...immutable(path.child('uid'), m.uid, o.uid),
    ...immutable(path.child('creationTimestamp'), m.creationTimestamp, o.creationTimestamp),
  ]
}
