/**
 * Validation of a CustomResourceDefinition as upstream's apiextensions
 * validation does it (ValidateCustomResourceDefinition and
 * ValidateCustomResourceDefinitionUpdate), in its order and with its paths:
 * the object's name, the spec (group, scope, versions and what they carry,
 * names, conversion), the accepted names, the stored versions, the approval
 * of protected groups and `preserveUnknownFields`. The generic metadata
 * rules are the registry's.
 */
import { type FieldError, type FieldPath, fieldPath, invalid, notSupported, required } from '../../machinery/field.js'
import { isDNS1123Subdomain } from '../../machinery/names.js'
import { dns1035LabelName } from '../names.js'
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import { hasAcceptedReviewVersionOrEmpty, validateConversion, webhookOf } from './conversion-rules.js'
import { goStringList, goVersions } from './go-values.js'
import { internalVersion, type InternalVersion, type Placement, placementOf, semanticEqual } from './layout.js'
import type { CustomResourceDefinition, CustomResourceDefinitionVersion } from './types.js'
import { conditionOf } from './types.js'
import {
  deprecationWarningProblems,
  validateColumns,
  validateSchemaHolder,
  validateSelectableFields,
  validateSubresources,
} from './version-rules.js'
import { appendAll } from '../../machinery/append-all.js'

const record = (value: unknown): Record<string, unknown> => (isPlainObject(value) ? value : {})
const text = (value: unknown): string => (typeof value === 'string' ? value : '')
const strings = (value: unknown): string[] => (Array.isArray(value) ? value.map(text) : [])

/** What an update relaxes for CRDs stored under older rules (upstream never tightens stored data). */
interface Options {
  requireOpenAPISchema: boolean
  requireAcceptedReviewVersion: boolean
  /** Versions whose schema an update leaves as it was: their rules are not held to the per-rule cost limit again. */
  unchangedSchemas: ReadonlySet<string>
}

const ON_CREATE: Options = { requireOpenAPISchema: true, requireAcceptedReviewVersion: true, unchangedSchemas: new Set() }

export const API_APPROVAL_ANNOTATION = 'api-approved.kubernetes.io'

// --- names -------------------------------------------------------------------------

const joined = (problems: string[]): string => problems.join(',')

/** Upstream's ValidateCustomResourceDefinitionNames, for spec.names and status.acceptedNames. */
export function validateNames(value: unknown, path: FieldPath): FieldError[] {
  const names = record(value)
  const errs: FieldError[] = []
  for (const field of ['plural', 'singular']) {
    const name = text(names[field])
    const problems = name ? dns1035LabelName(name) : []
    if (problems.length) errs.push(invalid(path.child(field), name, joined(problems)))
  }
  for (const field of ['kind', 'listKind']) {
    const name = text(names[field])
    const problems = name ? dns1035LabelName(name.toLowerCase()) : []
    if (problems.length) errs.push(invalid(path.child(field), name, `may have mixed case, but should otherwise match: ${joined(problems)}`))
  }
  strings(names['shortNames']).forEach((short, i) => {
    const problems = dns1035LabelName(short)
    if (problems.length) errs.push(invalid(path.child('shortNames').index(i), short, joined(problems)))
  })
  const kind = text(names['kind'])
  if (kind && kind === text(names['listKind'])) errs.push(invalid(path.child('listKind'), kind, 'kind and listKind may not be the same'))
  strings(names['categories']).forEach((category, i) => {
    const problems = dns1035LabelName(category)
    if (problems.length) errs.push(invalid(path.child('categories').index(i), category, joined(problems)))
  })
  return errs
}

// --- the spec ------------------------------------------------------------------------

const schemaOf = (holder: unknown): unknown => record(holder)['openAPIV3Schema']
const statusEnabled = (subresources: unknown): boolean => isPlainObject(record(subresources)['status'])

/** Whether a schema (or one below it) declares a default. */
function hasDefaults(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.some(hasDefaults)
  if (!isPlainObject(schema)) return false
  if (schema['default'] !== undefined && schema['default'] !== null) return true
  return Object.entries(schema).some(([key, child]) => {
    if (['properties', 'patternProperties', 'definitions', 'dependencies'].includes(key)) return Object.values(record(child)).some(hasDefaults)
    return ['items', 'allOf', 'anyOf', 'oneOf', 'not', 'additionalProperties', 'additionalItems'].includes(key) && hasDefaults(child)
  })
}

function validateGroup(group: string, path: FieldPath): FieldError[] {
  if (!group) return [required(path)]
  const problems = isDNS1123Subdomain(group)
  if (problems.length) return [invalid(path, group, joined(problems))]
  if (group.split('.').length < 2) return [invalid(path, group, 'should be a domain with at least one dot')]
  return []
}

function validateScope(scope: string, path: FieldPath): FieldError[] {
  if (!scope) return [required(path)]
  const supported = ['Cluster', 'Namespaced']
  return supported.includes(scope) ? [] : [notSupported(path, scope, supported)]
}

/** One version's own fields, with what was moved to spec level left out. */
function validateVersion(original: CustomResourceDefinitionVersion, v: InternalVersion, options: Options, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  for (const msg of dns1035LabelName(v.name)) errs.push(invalid(path.child('name'), v.name, msg))
  for (const problem of deprecationWarningProblems(v.deprecated, v.deprecationWarning))
    errs.push(invalid(path.child('deprecationWarning'), v.deprecationWarning ?? '', problem))
  const unchanged = options.unchangedSchemas.has(v.name)
  appendAll(errs, validateSchemaHolder(v.schema, statusEnabled(record(original)['subresources']), path.child('schema'), unchanged))
  appendAll(errs, validateSubresources(v.subresources, path.child('subresources')))
  appendAll(errs, validateColumns(v.additionalPrinterColumns, path.child('additionalPrinterColumns')))
  if (v.selectableFields?.length) {
    const schema = schemaOf(v.schema)
    if (!isPlainObject(schema)) {
      errs.push(invalid(path.child('selectableFields'), '', 'selectableFields may only be set when version.schema.openAPIV3Schema is not included'))
    } else {
      appendAll(errs, validateSelectableFields(v.selectableFields, schema, path.child('selectableFields')))
    }
  }
  return errs
}

/** What the versions agree on, validated once at spec level under upstream's internal names. */
function validateSharedFields(versions: CustomResourceDefinitionVersion[], placement: Placement, options: Options, path: FieldPath): FieldError[] {
  const first = record(versions[0])
  const errs: FieldError[] = []
  if (placement.schema) {
    const anyStatus = versions.some((v) => statusEnabled(record(v)['subresources']))
    // Upstream looks the shared schema up under the first version's name.
    const unchanged = options.unchangedSchemas.has(text(first['name']))
    appendAll(errs, validateSchemaHolder(first['schema'], anyStatus, path.child('validation'), unchanged))
  }
  if (placement.subresources) appendAll(errs, validateSubresources(first['subresources'], path.child('subresources')))
  if (placement.additionalPrinterColumns) appendAll(errs, validateColumns(first['additionalPrinterColumns'], path.child('additionalPrinterColumns')))
  const selectable = first['selectableFields']
  if (placement.selectableFields && Array.isArray(selectable) && selectable.length) {
    if (!isPlainObject(first['schema'])) {
      errs.push(invalid(path.child('selectableFields'), '', 'selectableFields may only be set when validations.schema is included'))
    } else {
      appendAll(errs, validateSelectableFields(selectable, record(schemaOf(first['schema'])), path.child('selectableFields')))
    }
  }
  return errs
}

function validateSpec(specValue: unknown, options: Options, path: FieldPath): FieldError[] {
  const spec = record(specValue)
  const versions = (Array.isArray(spec['versions']) ? spec['versions'] : []) as CustomResourceDefinitionVersion[]
  const preserveUnknownFields = spec['preserveUnknownFields'] === true
  const placement = placementOf(versions)
  const internal = versions.map((v) => internalVersion(v, placement))
  const versionsPath = path.child('versions')
  const errs: FieldError[] = [...validateGroup(text(spec['group']), path.child('group')), ...validateScope(text(spec['scope']), path.child('scope'))]

  const schemaPath = (i: number) => versionsPath.index(i).child('schema').child('openAPIV3Schema')
  if (options.requireOpenAPISchema) {
    versions.forEach((v, i) => {
      if (!isPlainObject(schemaOf(record(v)['schema']))) errs.push(required(schemaPath(i), 'schemas are required'))
    })
  } else if (!preserveUnknownFields) {
    versions.forEach((v, i) => {
      if (record(v)['served'] === true && !isPlainObject(schemaOf(record(v)['schema'])))
        errs.push(required(schemaPath(i), 'because otherwise all fields are pruned'))
    })
  }
  if (preserveUnknownFields && versions.some((v) => hasDefaults(schemaOf(record(v)['schema']))))
    errs.push(invalid(path.child('preserveUnknownFields'), true, 'must be false in order to use defaults in the schema'))

  internal.forEach((v, i) => appendAll(errs, validateVersion(versions[i] as CustomResourceDefinitionVersion, v, options, versionsPath.index(i))))

  const names = internal.map((v) => v.name)
  if (new Set(names).size !== names.length) errs.push(invalid(versionsPath, goVersions(internal, Array.isArray(spec['versions'])), 'must contain unique version names'))
  if (internal.filter((v) => v.storage).length !== 1) {
    const detail = 'must have exactly one version marked as storage version'
    errs.push(invalid(versionsPath, goVersions(internal, Array.isArray(spec['versions'])), detail))
  }
  // Upstream's internal form also carries the first version's name as `spec.version`, and checks it again there.
  const first = internal[0]
  if (first?.name) for (const msg of dns1035LabelName(first.name)) errs.push(invalid(path.child('version'), first.name, msg))

  const namesPath = path.child('names')
  const specNames = record(spec['names'])
  for (const field of ['plural', 'singular', 'kind', 'listKind']) if (!text(specNames[field])) errs.push(required(namesPath.child(field)))
  appendAll(errs, validateNames(specNames, namesPath))
  appendAll(errs, validateSharedFields(versions, placement, options, path))

  const strategy = text(record(spec['conversion'])['strategy'])
  if (strategy && strategy !== 'None' && preserveUnknownFields)
    errs.push(invalid(path.child('conversion').child('strategy'), strategy, 'must be None if spec.preserveUnknownFields is true'))
  appendAll(errs, validateConversion(spec['conversion'], options.requireAcceptedReviewVersion, path.child('conversion')))
  return errs
}

// --- status, approval, preserveUnknownFields --------------------------------------------

/** Every stored version must still be served from spec.versions, and the storage version must be among them. */
export function validateStoredVersions(storedValue: unknown, versionsValue: unknown, path: FieldPath): FieldError[] {
  const stored = strings(storedValue)
  if (stored.length === 0) return [invalid(path, goStringList(stored), 'must have at least one stored version')]
  const versions = (Array.isArray(versionsValue) ? versionsValue : []).map(record)
  const errs: FieldError[] = []
  for (const v of versions) {
    if (v['storage'] === true && !stored.includes(text(v['name'])))
      errs.push(invalid(path, goStringList(stored), `must have the storage version ${text(v['name'])}`))
  }
  const names = new Set(versions.map((v) => text(v['name'])))
  const reported = new Set<string>()
  // Upstream reports each missing version once, at its last index.
  stored.forEach((v, i) => {
    if (names.has(v) || reported.has(v) || stored.lastIndexOf(v) !== i) return
    reported.add(v)
    const detail =
      `missing from spec.versions; ${v} was previously a storage version, and must remain in spec.versions until a storage ` +
      `migration ensures no data remains persisted in ${v} and removes ${v} from status.storedVersions`
    errs.push(invalid(path.index(i), v, detail))
  })
  return errs
}

/** Groups of the Kubernetes project itself, whose APIs need an approved design. */
export function isProtectedGroup(group: string): boolean {
  return ['k8s.io', 'kubernetes.io'].some((domain) => group === domain || group.endsWith(`.${domain}`))
}

type Approval = 'approved' | 'bypassed' | 'missing' | 'invalid'

function approvalOf(annotations: unknown): { state: Approval; reason: string } {
  const value = text(record(annotations)[API_APPROVAL_ANNOTATION])
  const see = 'see https://github.com/kubernetes/enhancements/pull/1111'
  if (!value) return { state: 'missing', reason: `protected groups must have approval annotation "${API_APPROVAL_ANNOTATION}", ${see}` }
  if (value.startsWith('unapproved')) return { state: 'bypassed', reason: `not approved: ${JSON.stringify(value)}` }
  if (/^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#\s]+\S*$/.test(value)) return { state: 'approved', reason: `approved in ${value}` }
  return {
    state: 'invalid',
    reason: `protected groups must have approval annotation "${API_APPROVAL_ANNOTATION}" with either a URL or a reason starting with "unapproved", ${see}`,
  }
}

function validateApproval(crd: CustomResourceDefinition, old: CustomResourceDefinition | undefined): FieldError[] {
  if (!isProtectedGroup(text(record(crd.spec)['group']))) return []
  const now = approvalOf(crd.metadata.annotations)
  // An update that leaves the approval as it was is never refused for it.
  if (old && approvalOf(old.metadata.annotations).state === now.state) return []
  const path = fieldPath('metadata').child('annotations').key(API_APPROVAL_ANNOTATION)
  if (now.state === 'missing') return [required(path, now.reason)]
  if (now.state === 'invalid') return [invalid(path, text(record(crd.metadata.annotations)[API_APPROVAL_ANNOTATION]), now.reason)]
  return []
}

function validatePreserveUnknownFields(crd: CustomResourceDefinition, old: CustomResourceDefinition | undefined): FieldError[] {
  if (old && record(old.spec)['preserveUnknownFields'] === true) return []
  if (record(crd.spec)['preserveUnknownFields'] !== true) return []
  const detail = 'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead'
  return [invalid(fieldPath('spec').child('preserveUnknownFields'), true, detail)]
}

// --- entry points ------------------------------------------------------------------------

/** The name a CRD must have: its resource and group, so that two CRDs never serve the same resource. */
function validateCrdName(crd: CustomResourceDefinition): FieldError[] {
  const name = crd.metadata.name ?? ''
  const spec = record(crd.spec)
  const expected = `${text(record(spec['names'])['plural'])}.${text(spec['group'])}`
  if (!name || name === expected) return []
  return [invalid(fieldPath('metadata').child('name'), name, 'must be spec.names.plural+"."+spec.group')]
}

function validateStatusNames(crd: CustomResourceDefinition): FieldError[] {
  return validateNames(record(crd.status)['acceptedNames'], fieldPath('status').child('acceptedNames'))
}

export function validateCrd(obj: KubeObject): FieldError[] {
  const crd = obj as CustomResourceDefinition
  return [
    ...validateCrdName(crd),
    ...validateSpec(crd.spec, ON_CREATE, fieldPath('spec')),
    ...validateStatusNames(crd),
    ...validateStoredVersions(record(crd.status)['storedVersions'], record(crd.spec)['versions'], fieldPath('status').child('storedVersions')),
    ...validateApproval(crd, undefined),
    ...validatePreserveUnknownFields(crd, undefined),
  ]
}

const immutable = (path: FieldPath, value: unknown): FieldError => invalid(path, value, 'field is immutable')

/** The versions whose schema is the same in both objects (upstream's findVersionsWithUnchangedSchemas). */
function versionsWithUnchangedSchemas(spec: Record<string, unknown>, oldSpec: Record<string, unknown>): Set<string> {
  const schemas = (s: Record<string, unknown>) =>
    new Map((Array.isArray(s['versions']) ? s['versions'] : []).map((v) => [text(record(v)['name']), schemaOf(record(v)['schema'])]))
  const old = schemas(oldSpec)
  const unchanged = new Set<string>()
  for (const [name, schema] of schemas(spec)) if (old.has(name) && semanticEqual(schema, old.get(name))) unchanged.add(name)
  return unchanged
}

/** Whether every version of a stored CRD has a schema: only then does an update have to keep them all. */
function allVersionsHaveSchemas(spec: unknown): boolean {
  const versions = record(spec)['versions']
  return Array.isArray(versions) && versions.every((v) => isPlainObject(schemaOf(record(v)['schema'])))
}

/**
 * A write through `/status`, as upstream's status strategy checks it: the
 * accepted names alone (the metadata is checked for every update). Its spec
 * is the stored one, and nothing else of the spec, the approval or the
 * stored versions is held against it; so the controller's status writes do
 * not compile every CEL rule of the schema again.
 */
export function validateCrdStatusUpdate(obj: KubeObject): FieldError[] {
  return validateStatusNames(obj as CustomResourceDefinition)
}

export function validateCrdUpdate(obj: KubeObject, oldObj: KubeObject): FieldError[] {
  const crd = obj as CustomResourceDefinition
  const old = oldObj as CustomResourceDefinition
  const spec = record(crd.spec)
  const oldSpec = record(old.spec)
  const options: Options = {
    requireOpenAPISchema: allVersionsHaveSchemas(oldSpec),
    requireAcceptedReviewVersion: oldSpec['conversion'] === undefined || hasAcceptedReviewVersionOrEmpty(webhookOf(oldSpec['conversion']).reviewVersions),
    unchangedSchemas: versionsWithUnchangedSchemas(spec, oldSpec),
  }
  const path = fieldPath('spec')
  const errs = validateSpec(spec, options, path)
  // Once served, the scope and kind are part of how objects are stored.
  if (conditionOf(old, 'Established')?.status === 'True') {
    if (spec['scope'] !== oldSpec['scope']) errs.push(immutable(path.child('scope'), spec['scope']))
    const kind = record(spec['names'])['kind']
    if (kind !== record(oldSpec['names'])['kind']) errs.push(immutable(path.child('names').child('kind'), kind))
  }
  // The object's name is made of these, and names never change.
  if (spec['group'] !== oldSpec['group']) errs.push(immutable(path.child('group'), spec['group']))
  const plural = record(spec['names'])['plural']
  if (plural !== record(oldSpec['names'])['plural']) errs.push(immutable(path.child('names').child('plural'), plural))
  return [
    ...errs,
    ...validateStatusNames(crd),
    ...validateStoredVersions(record(crd.status)['storedVersions'], spec['versions'], fieldPath('status').child('storedVersions')),
    ...validateApproval(crd, old),
    ...validatePreserveUnknownFields(crd, old),
  ]
}
