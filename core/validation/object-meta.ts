/**
 * The metadata rules every resource shares (upstream's ValidateObjectMeta and
 * ValidateObjectMetaUpdate), worded as upstream words them.
 */
import { isPlainObject, type KubeObject } from '../machinery/object.js'
import {
  type FieldError,
  type FieldPath,
  fieldPath,
  forbiddenField,
  invalid,
  required,
  typeInvalid,
} from '../machinery/field.js'
import { GoLiteral, goQuote, goStrings } from '../machinery/go-format.js'
import { isDNS1123Label, isQualifiedName, isValidLabelValue } from '../machinery/names.js'
import { appendAll, appendAllInSteps } from '../machinery/append-all.js'
import { type Checkpointed, checkpointDue, runAtOnce } from '../machinery/time-slice.js'

/** What metadata validation needs to know of the resource (a catalogue entry has it). */
export interface MetadataRules {
  group: string
  kind: string
  namespaced: boolean
  /** Set for custom resources, whose metadata gets the generic rules alone. */
  schema?: unknown
  /** The messages for a name this resource refuses (upstream's name validation function). */
  validateName(name: string): string[]
}

const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024

function* validateStringMap(
  value: unknown,
  path: FieldPath,
  checkKey: (k: string) => string[],
  checkValue: ((v: string) => string[]) | undefined,
): Checkpointed<FieldError[]> {
  if (value === undefined || value === null) return []
  if (!isPlainObject(value)) return [typeInvalid(path, value, 'must be a map of string to string')]
  const errs: FieldError[] = []
  // Upstream names the map itself, not the entry, in both kinds of error.
  for (const k in value) {
    if (checkpointDue()) yield
    const v = value[k]
    for (const msg of checkKey(k)) errs.push(invalid(path, k, msg))
    if (typeof v !== 'string') {
      errs.push(typeInvalid(path.key(k), v, 'must be a string'))
      continue
    }
    if (checkValue) for (const msg of checkValue(v)) errs.push(invalid(path, v, msg))
  }
  return errs
}

/** Labels' keys and values, in checkpointed steps: a body holds hundreds of thousands of them. */
function validateLabelsInSteps(labels: unknown, path: FieldPath): Checkpointed<FieldError[]> {
  return validateStringMap(labels, path, isQualifiedName, isValidLabelValue)
}

export function validateLabels(labels: unknown, path: FieldPath): FieldError[] {
  return runAtOnce(validateLabelsInSteps(labels, path))
}

/** Annotation keys are qualified names whatever their case (upstream lowers them before the check). */
const annotationKeyProblems = (key: string): string[] => isQualifiedName(key.toLowerCase())

function* validateAnnotationsInSteps(annotations: unknown, path: FieldPath): Checkpointed<FieldError[]> {
  const errs = yield* validateStringMap(annotations, path, annotationKeyProblems, undefined)
  if (isPlainObject(annotations)) {
    let size = 0
    for (const k in annotations) {
      const v = annotations[k]
      size += k.length + (typeof v === 'string' ? v.length : 0)
      if (checkpointDue()) yield
    }
    if (size > TOTAL_ANNOTATION_SIZE_LIMIT)
      errs.push({
        type: 'FieldValueTooLong',
        field: String(path),
        detail: `may not be more than ${TOTAL_ANNOTATION_SIZE_LIMIT} bytes`,
      })
  }
  return errs
}

export function validateAnnotations(annotations: unknown, path: FieldPath): FieldError[] {
  return runAtOnce(validateAnnotationsInSteps(annotations, path))
}

/** Kinds that may not own anything (upstream's BannedOwners): events come and go. */
const BANNED_OWNERS = new Set(['/v1, Kind=Event'])

/** upstream's GroupVersionKind.String() of an owner, from schema.FromAPIVersionAndKind. */
function ownerGroupVersionKind(apiVersion: string, kind: string): { group: string; version: string; text: string } {
  const parts = apiVersion.split('/')
  // More than one slash does not parse: upstream then keeps only the kind.
  const [group, version] = parts.length === 1 ? ['', parts[0]!] : parts.length === 2 ? [parts[0]!, parts[1]!] : ['', '']
  return { group, version, text: `${group}/${version}, Kind=${kind}` }
}

const asText = (v: unknown): string => (typeof v === 'string' ? v : '')

/** `%#v` of one metav1.OwnerReference; a set *bool prints as a stand-in for its address. */
function ownerReferenceText(ref: Record<string, unknown>): string {
  const flag = (v: unknown): string => (typeof v === 'boolean' ? `(*bool)(&${v})` : '(*bool)(nil)')
  return (
    `v1.OwnerReference{APIVersion:${goQuote(ref['apiVersion'])}, Kind:${goQuote(ref['kind'])}, Name:${goQuote(ref['name'])}, ` +
    `UID:${goQuote(ref['uid'])}, Controller:${flag(ref['controller'])}, BlockOwnerDeletion:${flag(ref['blockOwnerDeletion'])}}`
  )
}

/**
 * upstream's validateOwnerReference. Its errors name the list itself, with
 * no index, as upstream reports them.
 */
function validateOwnerReference(ref: Record<string, unknown>, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  const apiVersion = asText(ref['apiVersion'])
  const kind = asText(ref['kind'])
  const gvk = ownerGroupVersionKind(apiVersion, kind)
  if (!gvk.version) errs.push(invalid(path.child('apiVersion'), apiVersion, 'version must not be empty'))
  if (!kind) errs.push(invalid(path.child('kind'), kind, 'kind must not be empty'))
  for (const f of ['name', 'uid'] as const) {
    const value = asText(ref[f])
    if (!value) errs.push(invalid(path.child(f), value, `${f} must not be empty`))
  }
  if (BANNED_OWNERS.has(gvk.text)) errs.push(invalid(path, new GoLiteral(ownerReferenceText(ref)), `${gvk.text} is disallowed from being an owner`))
  return errs
}

function* validateOwnerReferences(refs: unknown, path: FieldPath): Checkpointed<FieldError[]> {
  if (refs === undefined || refs === null) return []
  if (!Array.isArray(refs)) return [typeInvalid(path, refs, 'must be a list')]
  const errs: FieldError[] = []
  let firstController = ''
  for (let i = 0; i < refs.length; i++) {
    if (checkpointDue()) yield
    const ref: unknown = refs[i]
    if (!isPlainObject(ref)) {
      errs.push(typeInvalid(path.index(i), ref, 'must be an object'))
      continue
    }
    appendAll(errs, validateOwnerReference(ref, path))
    if (ref['controller'] !== true) continue
    const controller = `${asText(ref['kind'])}/${asText(ref['name'])}`
    if (!firstController) firstController = controller
    else {
      const shown = new GoLiteral(`[]v1.OwnerReference{${refs.map((r) => ownerReferenceText(isPlainObject(r) ? r : {})).join(', ')}}`)
      errs.push(invalid(path, shown, `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${controller}`))
    }
  }
  return errs
}

const FINALIZER_ORPHAN = 'orphan'
const FINALIZER_FOREGROUND = 'foregroundDeletion'
/** The finalizers a built-in kind may carry without a domain prefix. */
const STANDARD_FINALIZERS = new Set(['kubernetes', FINALIZER_ORPHAN, FINALIZER_FOREGROUND])

/**
 * Groups whose kinds upstream validates with the generic metadata rules
 * alone (apimachinery's ValidateObjectMeta), as custom resources are; every
 * other built-in kind goes through the core API's rules, which also refuse a
 * finalizer name that is neither standard nor domain-qualified. Events are
 * generic in core/v1 only: events.k8s.io writes get the core rules too.
 */
const GENERIC_METADATA_GROUPS = new Set([
  'admissionregistration.k8s.io',
  'apiextensions.k8s.io',
  'apiregistration.k8s.io',
  'coordination.k8s.io',
  'node.k8s.io',
])

function checksKubeFinalizerNames(entry: MetadataRules): boolean {
  if (entry.schema !== undefined || GENERIC_METADATA_GROUPS.has(entry.group)) return false
  return !(entry.group === '' && entry.kind === 'Event')
}

function* validateFinalizers(finalizers: unknown, path: FieldPath, kubeNames: boolean): Checkpointed<FieldError[]> {
  if (finalizers === undefined || finalizers === null) return []
  if (!Array.isArray(finalizers)) return [typeInvalid(path, finalizers, 'must be a list of strings')]
  const errs: FieldError[] = []
  for (let i = 0; i < finalizers.length; i++) {
    if (checkpointDue()) yield
    const f: unknown = finalizers[i]
    if (typeof f !== 'string') errs.push(typeInvalid(path.index(i), f, 'must be a string'))
    else for (const msg of isQualifiedName(f)) errs.push(invalid(path, f, msg))
  }
  // Orphaning the dependents and deleting them first are opposite wishes.
  if (finalizers.includes(FINALIZER_ORPHAN) && finalizers.includes(FINALIZER_FOREGROUND)) {
    errs.push(invalid(path, goStrings(finalizers.map(asText)), `finalizer ${FINALIZER_ORPHAN} and ${FINALIZER_FOREGROUND} cannot be both set`))
  }
  if (kubeNames) yield* appendAllInSteps(errs, yield* kubeFinalizerNameProblems(finalizers, path))
  return errs
}

/**
 * The generic rules on finalizers (qualified names, not both orphan and
 * foreground) alone: what a kind whose update validation checks the new
 * object's metadata as a new object's (webhook configurations) adds to the
 * update rules.
 */
export function validateFinalizerNames(finalizers: unknown, path: FieldPath): FieldError[] {
  return runAtOnce(validateFinalizers(finalizers, path, false))
}

/** The core API's rule on finalizer names, each at its index: unqualified names are the standard ones alone. */
function* kubeFinalizerNameProblems(finalizers: unknown, path: FieldPath): Checkpointed<FieldError[]> {
  if (!Array.isArray(finalizers)) return []
  const errs: FieldError[] = []
  for (let i = 0; i < finalizers.length; i++) {
    if (checkpointDue()) yield
    const f: unknown = finalizers[i]
    if (typeof f === 'string' && !f.includes('/') && !STANDARD_FINALIZERS.has(f))
      errs.push(invalid(path.index(i), f, 'name is neither a standard finalizer name nor is it fully qualified'))
  }
  return errs
}

/** What upstream checks of a generateName: the name rule, a trailing dash allowed (the random suffix follows it). */
function generateNameProblems(generateName: string, entry: MetadataRules): string[] {
  const masked = generateName.length > 1 && generateName.endsWith('-') ? `${generateName.slice(0, -2)}a` : generateName
  return entry.validateName(masked)
}

/** Name, namespace, labels, annotations, owner references and finalizers of a new object. */
export function* validateObjectMetaInSteps(obj: KubeObject, entry: MetadataRules): Checkpointed<FieldError[]> {
  const meta = obj.metadata
  const path = fieldPath('metadata')
  const errs: FieldError[] = []
  if (meta.generateName) for (const msg of generateNameProblems(meta.generateName, entry)) errs.push(invalid(path.child('generateName'), meta.generateName, msg))
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
  yield* appendAllInSteps(errs, yield* validateLabelsInSteps(meta.labels, path.child('labels')))
  yield* appendAllInSteps(errs, yield* validateAnnotationsInSteps(meta.annotations, path.child('annotations')))
  yield* appendAllInSteps(errs, yield* validateOwnerReferences(meta.ownerReferences, path.child('ownerReferences')))
  yield* appendAllInSteps(errs, yield* validateFinalizers(meta.finalizers, path.child('finalizers'), checksKubeFinalizerNames(entry)))
  return errs
}

function immutable(path: FieldPath, value: unknown, old: unknown): FieldError[] {
  if (value === old) return []
  return [invalid(path, value ?? '', 'field is immutable')]
}

/** The finalizers an update adds to an object already being deleted: upstream forbids any. */
function newFinalizerProblems(finalizers: unknown, old: unknown, path: FieldPath): FieldError[] {
  const before = new Set(Array.isArray(old) ? old : [])
  const added = [...new Set((Array.isArray(finalizers) ? finalizers : []).filter((f): f is string => typeof f === 'string' && !before.has(f)))].sort()
  if (added.length === 0) return []
  return [forbiddenField(path, `no new finalizers can be added if the object is being deleted, found new finalizers ${goStrings(added).text}`)]
}

/**
 * What an update's metadata is checked for (upstream's
 * ValidateObjectMetaAccessorUpdate, with the core API's finalizer names):
 * no finalizer added once deletion began, a generation that does not go
 * back, the fields fixed at creation, and labels, annotations and owner
 * references as on create. Names, namespaces and finalizers' syntax are not
 * checked again, as upstream does not.
 */
export function* validateObjectMetaUpdateInSteps(obj: KubeObject, old: KubeObject, entry: MetadataRules): Checkpointed<FieldError[]> {
  const path = fieldPath('metadata')
  const m = obj.metadata
  const o = old.metadata
  const errs: FieldError[] = []
  if (o.deletionTimestamp) appendAll(errs, newFinalizerProblems(m.finalizers, o.finalizers, path.child('finalizers')))
  if ((m.generation ?? 0) < (o.generation ?? 0)) errs.push(invalid(path.child('generation'), m.generation ?? 0, 'must not be decremented'))
  errs.push(
    ...immutable(path.child('name'), m.name, o.name),
    ...immutable(path.child('namespace'), m.namespace, o.namespace),
    ...immutable(path.child('uid'), m.uid, o.uid),
    ...immutable(path.child('creationTimestamp'), m.creationTimestamp, o.creationTimestamp),
  )
  yield* appendAllInSteps(errs, yield* validateLabelsInSteps(m.labels, path.child('labels')))
  yield* appendAllInSteps(errs, yield* validateAnnotationsInSteps(m.annotations, path.child('annotations')))
  yield* appendAllInSteps(errs, yield* validateOwnerReferences(m.ownerReferences, path.child('ownerReferences')))
  if (checksKubeFinalizerNames(entry)) yield* appendAllInSteps(errs, yield* kubeFinalizerNameProblems(m.finalizers, path.child('finalizers')))
  return errs
}
