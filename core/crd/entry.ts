/**
 * The catalogue entries a CustomResourceDefinition serves: one per served
 * version, named by the CRD's accepted names, stored under
 * `<group>/<plural>`, and checked against the version's structural schema as
 * upstream's custom resource strategy does: pruning and the metadata's type
 * at decode time, schema defaults, then the schema's validation and its
 * `x-kubernetes-validations` rules.
 */
import { fieldLabelNotSupported } from '../resources/field-labels.js'
import { StatusError } from '../machinery/status-error.js'
import {
  conditionOf,
  type CustomResourceDefinition,
  type CustomResourceDefinitionNames,
  type CustomResourceDefinitionVersion,
} from '../resources/apiextensions/types.js'
import type { ResourceEntry, Strategy, SubresourceEntry, VersionConversion } from '../resources/catalogue.js'
import { ALL_VERBS } from '../resources/catalogue.js'
import { scaleSubresource, statusSubresource } from '../resources/define.js'
import { dnsSubdomainName } from '../resources/names.js'
import type { KubeObject } from '../machinery/object.js'
import { typeTable } from '../resources/schema/index.js'
import { decodeAs } from '../resources/schema/json-decoding.js'
import type { TypeDef } from '../resources/schema/model.js'
import { validateCustomResourceScale } from '../resources/scale-paths.js'
import { sameJson } from '../machinery/same-json.js'
import { type FieldError, FieldPath, withFieldErrorCapInSteps } from '../machinery/field.js'
import { type CelSchemaProps, compileRules, type CompiledRules, validateRules } from '../crd-schema/cel-rules.js'
import { customResourceColumns } from './columns.js'
import { applySchemaDefaults } from './defaults.js'
import { prune } from './prune.js'
import { ratchet, stillCounts } from './ratcheting.js'
import type { JSONSchemaProps } from '../crd-schema/schema.js'
import { selectableFieldSet } from './selectable-fields.js'
import { defaultingFromStorage } from './storage-defaults.js'
import { validateObjectInSteps } from './validate.js'
import type { Checkpointed } from '../machinery/time-slice.js'
import { appendAll } from '../machinery/append-all.js'

/** What building the entries needs from the server: how versions convert (webhooks need a client). */
export interface CustomResourceDeps {
  conversion(crd: CustomResourceDefinition, version: string): VersionConversion | undefined
}

/**
 * The names a CRD is served under: the accepted ones, as upstream serves
 * them, once its names were accepted or it was established.
 */
export function servedNames(crd: CustomResourceDefinition): CustomResourceDefinitionNames | undefined {
  const names = crd.status?.acceptedNames
  const live = conditionOf(crd, 'NamesAccepted')?.status === 'True' || conditionOf(crd, 'Established')?.status === 'True'
  return live && names?.plural && names.kind ? names : undefined
}

/**
 * Upstream's version priority (kube-aware sort): GA before beta before
 * alpha, higher numbers first; versions of another form last, by name.
 */
export function compareVersions(a: string, b: string): number {
  const rank = (v: string): [number, number, number, string] => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v)
    if (!m) return [3, 0, 0, v]
    const stage = m[2] === undefined ? 0 : m[2] === 'beta' ? 1 : 2
    return [stage, -Number(m[1]), -Number(m[3] ?? 0), v]
  }
  const [x, y] = [rank(a), rank(b)]
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number)
  return x[3] < y[3] ? -1 : x[3] > y[3] ? 1 : 0
}

/** The entries of every served version, in discovery's order; none while the names are not accepted. */
export function customResourceEntries(crd: CustomResourceDefinition, deps: CustomResourceDeps): ResourceEntry[] {
  const names = servedNames(crd)
  if (!names) return []
  const terminating = crd.metadata.deletionTimestamp !== undefined
  return crd.spec.versions
    .filter((v) => v.served)
    .sort((a, b) => compareVersions(a.name, b.name))
    .map((version) => versionEntry(crd, names, version, terminating, deps.conversion(crd, version.name)))
}

/** Upstream's OpenAPI definition name of a custom resource: the reversed group, the version, the kind. */
export function definitionName(group: string, version: string, kind: string): string {
  return [...group.split('.').reverse(), version, kind].join('.')
}

function versionEntry(
  crd: CustomResourceDefinition,
  names: CustomResourceDefinitionNames,
  version: CustomResourceDefinitionVersion,
  terminating: boolean,
  conversion: VersionConversion | undefined,
): ResourceEntry {
  const { group } = crd.spec
  const schema = version.schema?.openAPIV3Schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }
  const subresources: SubresourceEntry[] = []
  const hasStatus = version.subresources?.status !== undefined
  // apiextensions' status strategy: the stored object with the request's status (and managed fields) alone.
  if (hasStatus) subresources.push(statusSubresource(names.kind, 'all'))
  const scale = version.subresources?.scale
  if (scale) subresources.push(scaleSubresource)
  const entry: ResourceEntry = {
    group,
    version: version.name,
    kind: names.kind,
    listKind: names.listKind ?? `${names.kind}List`,
    resource: names.plural,
    singular: names.singular ?? names.kind.toLowerCase(),
    namespaced: crd.spec.scope === 'Namespaced',
    verbs: ALL_VERBS,
    typeName: definitionName(group, version.name, names.kind),
    validateName: dnsSubdomainName,
    strategy: customResourceStrategy(schema, hasStatus, terminating, { group, resource: names.plural }, version),
    decode: (obj) => decodeCustomResource(obj, schema),
    columns: customResourceColumns(version.additionalPrinterColumns),
    storagePath: `${group}/${names.plural}`,
    schema,
  }
  if (names.shortNames?.length) entry.shortNames = names.shortNames
  if (names.categories?.length) entry.categories = names.categories
  if (subresources.length) entry.subresources = subresources
  if (scale) entry.scalePaths = scale
  // Objects read from storage take the CRD's current defaults (upstream's storage codec defaults them).
  if (conversion) entry.conversion = defaultingFromStorage(crd, conversion)
  return entry
}

/** A custom resource's metadata goes through ObjectMeta's decoder: its unknown fields are reported, wrong types refused. */
const METADATA_ONLY: TypeDef = {
  name: 'custom-resource-metadata',
  fields: [{ name: 'metadata', type: { ref: 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' } }],
}

/** Decoding as upstream's CR handler: metadata typed, unknown fields pruned; their paths go to field validation. */
function decodeCustomResource(obj: KubeObject, schema: JSONSchemaProps): string[] {
  const kind = typeof obj.kind === 'string' ? obj.kind : ''
  const version = typeof obj.apiVersion === 'string' ? obj.apiVersion.slice(obj.apiVersion.indexOf('/') + 1) : ''
  const unknown = decodeAs({ metadata: obj.metadata }, METADATA_ONLY, typeTable, kind, version)
  return [...unknown, ...prune(obj, schema)]
}

/** Everything but metadata: what the generation of a custom resource counts (and status, when it is a subresource). */
function content(obj: KubeObject, withoutStatus: boolean): Record<string, unknown> {
  const { metadata: _m, ...rest } = obj
  if (withoutStatus) delete rest['status']
  return rest
}

function customResourceStrategy(
  schema: JSONSchemaProps,
  hasStatus: boolean,
  terminating: boolean,
  gr: { group: string; resource: string },
  version: CustomResourceDefinitionVersion,
): Strategy {
  let compiled: CompiledRules | null = null
  const rules = (): CompiledRules => {
    // A structural schema (the CRD's validation saw to it) has one `items` schema, as the rules expect.
    // Compiled on first use: a CRD with many versions pays only for those written to.
    if (compiled === null) compiled = compileRules(schema as CelSchemaProps, FieldPath.root(''), { resourceRoot: true, estimateCost: false }).compiled
    return compiled
  }
  const scale = version.subresources?.scale
  // The schema's errors, the first MAX_FIELD_ERRORS kept; on an update, those ratcheting drops do not count.
  const schemaWalk = (obj: KubeObject, old: KubeObject | undefined): Checkpointed<FieldError[]> =>
    withFieldErrorCapInSteps(validateObjectInSteps(obj, schema, FieldPath.root('')), old ? (e) => stillCounts(e, obj, old) : undefined)
  // The walk of a large object over a schema of many junctors takes seconds: the registry runs it in slices.
  const check = function* (obj: KubeObject, old: KubeObject | undefined): Checkpointed<FieldError[]> {
    const found = yield* schemaWalk(obj, old)
    const errs = old ? ratchet(found, obj, old) : found
    if (scale) appendAll(errs, validateCustomResourceScale(obj, scale))
    return [...errs, ...validateRules(rules(), obj, old, FieldPath.root(''))]
  }
  const strategy: Strategy = {
    // Upstream's custom resource strategy: an update must name the resourceVersion it read.
    allowUnconditionalUpdate: false,
    applyDefaults: (obj) => applySchemaDefaults(obj, schema),
    prepareForCreate(obj) {
      if (terminating) {
        const details = { group: gr.group, kind: gr.resource }
        throw new StatusError(405, 'MethodNotAllowed', 'create not allowed while custom resource definition is terminating', details)
      }
      if (hasStatus) delete obj['status']
      obj.metadata.generation = 1
    },
    // The registry keeps the stored status when the status is a subresource (keepStoredStatus).
    prepareForUpdate(obj, old) {
      const generation = old.metadata.generation ?? 0
      obj.metadata.generation = sameJson(content(obj, hasStatus), content(old, hasStatus)) ? generation : generation + 1
    },
    validate: (obj) => check(obj, undefined),
    validateUpdate: (obj, old) => check(obj, old),
    // Custom resources convert their own field labels: metadata.namespace only when namespaced.
    fieldLabelRefusal: fieldLabelNotSupported,
  }
  if (version.selectableFields?.length) strategy.fieldSet = selectableFieldSet(version.selectableFields)
  return strategy
}
