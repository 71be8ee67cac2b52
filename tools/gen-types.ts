/**
 * Dev-time generator: reads upstream's type facts (OpenAPI v2 definitions and
 * protobuf field numbers, see reference/openapi/README.md) and writes the
 * committed type tables under core/resources/schema/generated/.
 *
 *   npx tsx tools/gen-types.ts [path/to/reference/openapi]
 *
 * The default input directory is ../shared/reference/openapi relative to the
 * repository root. Nothing at run time reads the reference data: only the
 * generated files are used, so CI clones without it still build and test.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FieldDef, JsonForms, Scalar, TypeDef, TypeRef } from '../core/resources/schema/model.js'

/**
 * The group/versions the built-in catalogue serves: every kind registered in
 * one of them (and its list) joins the tables, with its dependencies.
 */
const SERVED_GROUP_VERSIONS: readonly string[] = [
  'v1',
  'admissionregistration.k8s.io/v1',
  'apiextensions.k8s.io/v1',
  'apiregistration.k8s.io/v1',
  'apps/v1',
  'authentication.k8s.io/v1',
  'authorization.k8s.io/v1',
  'autoscaling/v1',
  'autoscaling/v2',
  'batch/v1',
  'certificates.k8s.io/v1',
  'coordination.k8s.io/v1',
  'coordination.k8s.io/v1alpha2',
  'discovery.k8s.io/v1',
  'events.k8s.io/v1',
  'flowcontrol.apiserver.k8s.io/v1',
  'networking.k8s.io/v1',
  'node.k8s.io/v1',
  'policy/v1',
  'rbac.authorization.k8s.io/v1',
  'resource.k8s.io/v1',
  'scheduling.k8s.io/v1',
  'storage.k8s.io/v1',
]

/** Types outside those group/versions; adding one is one line here, its dependencies follow. */
const ROOTS: readonly string[] = [
  'io.k8s.apimachinery.pkg.apis.meta.v1.Status',
  'io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta',
  'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
  'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions',
  'io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent',
  'io.k8s.apimachinery.pkg.apis.meta.v1.Table',
  'io.k8s.apimachinery.pkg.apis.meta.v1.PartialObjectMetadata',
  'io.k8s.apimachinery.pkg.apis.meta.v1.PartialObjectMetadataList',
]

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1'

/** Definitions whose wire forms the model treats as scalars (see model.ts). */
const SPECIAL_SCALARS: Readonly<Record<string, Scalar>> = {
  [`${META}.Time`]: 'time',
  [`${META}.MicroTime`]: 'microtime',
  [`${META}.Duration`]: 'duration',
  [`${META}.FieldsV1`]: 'raw',
  'io.k8s.apimachinery.pkg.api.resource.Quantity': 'quantity',
  'io.k8s.apimachinery.pkg.util.intstr.IntOrString': 'int-or-string',
  'io.k8s.apimachinery.pkg.runtime.RawExtension': 'raw',
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON': 'raw',
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1beta1.JSON': 'raw',
}

const APIEXTENSIONS = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1'

/**
 * Types whose Go code marshals them by hand, so the OpenAPI document gives
 * them no properties: which JSON kind travels in which field of the protobuf
 * message, and Go's error for any other kind (JSONSchemaPropsOrBool alone
 * refuses one; the others decode it as absent).
 */
const JSON_FORMS: Readonly<Record<string, { object?: string; array?: string; boolean?: string; invalid?: string }>> = {
  [`${APIEXTENSIONS}.JSONSchemaPropsOrArray`]: { object: 'schema', array: 'jSONSchemas' },
  [`${APIEXTENSIONS}.JSONSchemaPropsOrBool`]: { object: 'schema', boolean: 'allows', invalid: 'boolean or JSON schema expected' },
  [`${APIEXTENSIONS}.JSONSchemaPropsOrStringArray`]: { object: 'schema', array: 'property' },
}

interface SchemaV2 {
  type?: string
  format?: string
  $ref?: string
  items?: SchemaV2
  additionalProperties?: SchemaV2 | boolean
  properties?: Record<string, SchemaV2>
  required?: string[]
  enum?: unknown[]
  'x-kubernetes-list-type'?: string
  'x-kubernetes-list-map-keys'?: string[]
  'x-kubernetes-patch-strategy'?: string
  'x-kubernetes-patch-merge-key'?: string
  'x-kubernetes-group-version-kind'?: { group: string; version: string; kind: string }[]
}

interface ProtoField {
  n: number
  type: string
  repeated?: boolean
}
type ProtoPackages = Record<string, { file: string; messages: Record<string, Record<string, ProtoField>> }>

/**
 * Meta types that the published OpenAPI document leaves out because upstream
 * serves them only through content negotiation (Table, PartialObjectMetadata).
 * Field names and types only; protobuf numbers still come from the proto data.
 */
const SUPPLEMENT: Readonly<Record<string, SchemaV2>> = {
  [`${META}.Table`]: {
    type: 'object',
    required: ['columnDefinitions', 'rows'],
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { $ref: `#/definitions/${META}.ListMeta` },
      columnDefinitions: { type: 'array', items: { $ref: `#/definitions/${META}.TableColumnDefinition` } },
      rows: { type: 'array', items: { $ref: `#/definitions/${META}.TableRow` } },
    },
    'x-kubernetes-group-version-kind': [{ group: 'meta.k8s.io', version: 'v1', kind: 'Table' }],
  },
  [`${META}.TableColumnDefinition`]: {
    type: 'object',
    required: ['name', 'type', 'format', 'description', 'priority'],
    properties: {
      name: { type: 'string' },
      type: { type: 'string' },
      format: { type: 'string' },
      description: { type: 'string' },
      priority: { type: 'integer', format: 'int32' },
    },
  },
  [`${META}.TableRow`]: {
    type: 'object',
    required: ['cells'],
    properties: {
      cells: { type: 'array', items: { $ref: '#/definitions/io.k8s.apimachinery.pkg.runtime.RawExtension' } },
      conditions: { type: 'array', items: { $ref: `#/definitions/${META}.TableRowCondition` } },
      object: { $ref: '#/definitions/io.k8s.apimachinery.pkg.runtime.RawExtension' },
    },
  },
  [`${META}.TableRowCondition`]: {
    type: 'object',
    required: ['type', 'status'],
    properties: {
      type: { type: 'string' },
      status: { type: 'string' },
      reason: { type: 'string' },
      message: { type: 'string' },
    },
  },
  [`${META}.PartialObjectMetadata`]: {
    type: 'object',
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { $ref: `#/definitions/${META}.ObjectMeta` },
    },
    'x-kubernetes-group-version-kind': [{ group: 'meta.k8s.io', version: 'v1', kind: 'PartialObjectMetadata' }],
  },
  [`${META}.PartialObjectMetadataList`]: {
    type: 'object',
    required: ['items'],
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { $ref: `#/definitions/${META}.ListMeta` },
      items: { type: 'array', items: { $ref: `#/definitions/${META}.PartialObjectMetadata` } },
    },
    'x-kubernetes-group-version-kind': [{ group: 'meta.k8s.io', version: 'v1', kind: 'PartialObjectMetadataList' }],
  },
}

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const inputDir = resolve(process.argv[2] ?? join(repoRoot, '..', 'shared', 'reference', 'openapi'))
const outDir = join(repoRoot, 'core', 'resources', 'schema', 'generated')

const openapi = JSON.parse(readFileSync(join(inputDir, 'kubernetes-openapi-v2.json'), 'utf8')) as {
  definitions: Record<string, SchemaV2>
}
const protos = JSON.parse(readFileSync(join(inputDir, 'protobuf-field-numbers.json'), 'utf8')) as ProtoPackages
const definitions: Record<string, SchemaV2> = { ...openapi.definitions, ...SUPPLEMENT }

/**
 * Stripping descriptions from the reference document also removed the
 * properties that are *named* description (PriorityClass.description,
 * JSONSchemaProps.description, ...). Their protobuf messages still list
 * them, so they are restored from there as the strings they are.
 */
function restoreDescriptionFields(): void {
  for (const [name, schema] of Object.entries(definitions)) {
    const proto = protoMessage(name)
    if (proto?.['description']?.type !== 'string' || !schema.properties || schema.properties['description']) continue
    schema.properties = { ...schema.properties, description: { type: 'string' } }
  }
}

const warnings: string[] = []

function refName(ref: string): string {
  return ref.slice(ref.lastIndexOf('/') + 1)
}

/** `io.k8s.api.core.v1.ConfigMap` -> proto package `k8s.io.api.core.v1`, message `ConfigMap`. */
function protoMessage(defName: string): Record<string, ProtoField> | undefined {
  const dot = defName.lastIndexOf('.')
  const pkg = `k8s.io.${defName.slice('io.k8s.'.length, dot).replaceAll('-', '_')}`
  const fields = protos[pkg]?.messages[defName.slice(dot + 1)]
  // PartialObjectMetadataList has moved between meta versions; either package's message has the same numbers.
  if (!fields && defName.startsWith(META)) {
    return protos['k8s.io.apimachinery.pkg.apis.meta.v1beta1']?.messages[defName.slice(dot + 1)]
  }
  return fields
}

function typeRefOf(schema: SchemaV2, where: string, pending: string[]): TypeRef {
  if (schema.$ref) {
    const name = refName(schema.$ref)
    const special = SPECIAL_SCALARS[name]
    if (special) return { scalar: special }
    if (!definitions[name]) throw new Error(`${where}: unknown definition ${name}`)
    pending.push(name)
    return { ref: name }
  }
  switch (schema.type) {
    case 'string':
      if (schema.format === 'byte') return { scalar: 'bytes' }
      if (schema.format === 'int-or-string') return { scalar: 'int-or-string' }
      if (schema.format === 'date-time') return { scalar: 'time' }
      return { scalar: 'string' }
    case 'boolean':
      return { scalar: 'boolean' }
    case 'integer':
      return { scalar: schema.format === 'int32' ? 'int32' : 'int64' }
    case 'number':
      return { scalar: 'double' }
    case 'array':
      if (!schema.items) throw new Error(`${where}: array without items`)
      return { array: typeRefOf(schema.items, `${where}[]`, pending) }
    case 'object':
      if (typeof schema.additionalProperties === 'object') {
        return { map: typeRefOf(schema.additionalProperties, `${where}{}`, pending) }
      }
      return { scalar: 'raw' }
    case undefined:
      // An untyped schema (`{}`) accepts any JSON value.
      return { scalar: 'raw' }
    default:
      throw new Error(`${where}: unsupported type ${schema.type}`)
  }
}

/** Is the proto field's declared type a plausible encoding of the JSON type? Catches mismatched matches. */
function protoCompatible(t: TypeRef, p: ProtoField): boolean {
  if ('array' in t) return p.repeated === true
  if ('map' in t) return p.type.startsWith('map<')
  if ('ref' in t) return !['string', 'bool', 'bytes', 'int32', 'int64', 'double', 'float'].includes(p.type)
  switch (t.scalar) {
    case 'string':
      return p.type === 'string'
    case 'bytes':
      return p.type === 'bytes'
    case 'boolean':
      return p.type === 'bool'
    case 'int32':
    case 'int64':
      return p.type === 'int32' || p.type === 'int64'
    case 'double':
      return p.type === 'double' || p.type === 'float'
    default:
      return true
  }
}

function loose(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]/g, '')
}

const SCALAR_PROTO_TYPES = new Set(['string', 'bool', 'bytes', 'int32', 'int64', 'double', 'float'])

/** A proto field's message type as [package, message]: `Foo` is in `pkg`, `.k8s.io.x.v1.Foo` is qualified. */
function protoTypeOf(type: string, pkg: string): [string, string] {
  if (!type.startsWith('.')) return [pkg, type]
  const dot = type.lastIndexOf('.')
  return [type.slice(1, dot), type.slice(dot + 1)]
}

/** `k8s.io.api.core.v1` -> `io.k8s.api.core.v1`, the inverse of protoMessage's package mapping. */
function definitionNamespace(pkg: string): string {
  return `io.k8s.${pkg.slice('k8s.io.'.length).replaceAll('_', '-')}`
}

/** Does a message (or a message embedded in it, at any depth) carry a field of this JSON name? */
function messageCarries(pkg: string, message: string, jsonName: string, depth = 0): boolean {
  const fields = protos[pkg]?.messages[message]
  if (!fields || depth > 4) return false
  for (const [k, pf] of Object.entries(fields)) {
    if (k === jsonName || loose(k) === loose(jsonName)) return true
    if (!pf.repeated && !pf.type.startsWith('map<') && !SCALAR_PROTO_TYPES.has(pf.type)) {
      const [p, m] = protoTypeOf(pf.type, pkg)
      if (loose(k) === loose(m) && messageCarries(p, m, jsonName, depth + 1)) return true
    }
  }
  return false
}

/**
 * Go structs embedded without a JSON name (a Volume's VolumeSource, a
 * Probe's ProbeHandler) put their fields at the outer level in JSON but
 * travel as one nested message in protobuf. For each such message this
 * finds the JSON fields it carries, and names (or synthesizes) the
 * definition of the embedded struct so the codec can nest them.
 */
function embeddedStructs(
  name: string,
  schema: SchemaV2,
  unmatched: string[],
  pending: string[],
): { proto: number; type: string; fields: string[] }[] {
  const proto = protoMessage(name)
  if (!proto || unmatched.length === 0) return []
  const dot = name.lastIndexOf('.')
  const pkg = `k8s.io.${name.slice('io.k8s.'.length, dot).replaceAll('-', '_')}`
  const found: { proto: number; type: string; fields: string[] }[] = []
  const props = schema.properties ?? {}
  const directNames = new Set(Object.keys(props).map(loose))
  for (const [protoName, pf] of Object.entries(proto).sort(([, a], [, b]) => a.n - b.n)) {
    if (directNames.has(loose(protoName)) || pf.repeated || pf.type.startsWith('map<') || SCALAR_PROTO_TYPES.has(pf.type)) continue
    const [msgPkg, msgName] = protoTypeOf(pf.type, pkg)
    const carried = unmatched.filter((f) => messageCarries(msgPkg, msgName, f))
    if (carried.length === 0) continue
    const defName = `${definitionNamespace(msgPkg)}.${msgName}`
    if (!definitions[defName]) {
      const properties: Record<string, SchemaV2> = {}
      for (const f of carried) properties[f] = props[f]!
      definitions[defName] = {
        type: 'object',
        properties,
        required: (schema.required ?? []).filter((r) => carried.includes(r)),
      }
    }
    pending.push(defName)
    found.push({ proto: pf.n, type: defName, fields: carried })
    unmatched = unmatched.filter((f) => !carried.includes(f))
  }
  return found
}

/** The wrapper message's fields for each JSON form of a hand-marshalled type (see JSON_FORMS). */
function jsonFormsOf(name: string, pending: string[]): JsonForms {
  const spec = JSON_FORMS[name]!
  const proto = protoMessage(name)
  const pkg = `k8s.io.${name.slice('io.k8s.'.length, name.lastIndexOf('.')).replaceAll('-', '_')}`
  const forms: JsonForms = {}
  for (const kind of ['object', 'array', 'boolean'] as const) {
    const protoName = spec[kind]
    if (!protoName) continue
    const pf = proto?.[protoName]
    if (!pf) throw new Error(`${name}: no protobuf field ${protoName}`)
    let type: TypeRef
    if (SCALAR_PROTO_TYPES.has(pf.type)) type = { scalar: pf.type === 'bool' ? 'boolean' : 'string' }
    else {
      const [msgPkg, msg] = protoTypeOf(pf.type, pkg)
      const ref = `${definitionNamespace(msgPkg)}.${msg}`
      pending.push(ref)
      type = { ref }
    }
    forms[kind] = { name: protoName, type: pf.repeated ? { array: type } : type, proto: pf.n }
  }
  if (spec.invalid) forms.invalid = spec.invalid
  return forms
}

function buildType(name: string, pending: string[]): TypeDef {
  const schema = definitions[name]
  if (!schema) throw new Error(`unknown definition ${name}`)
  if (JSON_FORMS[name]) return { name, fields: [], jsonForms: jsonFormsOf(name, pending) }
  const proto = protoMessage(name)
  const required = new Set(schema.required ?? [])
  const fields: FieldDef[] = []
  for (const [fieldName, prop] of Object.entries(schema.properties ?? {}).sort(([a], [b]) => (a < b ? -1 : 1))) {
    const type = typeRefOf(prop, `${name}.${fieldName}`, pending)
    const field: FieldDef = { name: fieldName, type }
    // Go-derived proto names differ from JSON names in case and punctuation (`uID`, `xKubernetesListType`, `ref`).
    const pf =
      proto?.[fieldName] ?? Object.entries(proto ?? {}).find(([k]) => loose(k) === loose(fieldName))?.[1]
    if (pf) {
      if (!protoCompatible(type, pf)) warnings.push(`${name}.${fieldName}: proto type ${pf.type} vs ${JSON.stringify(type)}`)
      field.proto = pf.n
    }
    if (required.has(fieldName)) field.required = true
    const listType = prop['x-kubernetes-list-type']
    if (listType === 'atomic' || listType === 'set' || listType === 'map') field.listType = listType
    if (prop['x-kubernetes-list-map-keys']) field.listMapKeys = [...prop['x-kubernetes-list-map-keys']]
    if (prop['x-kubernetes-patch-strategy']) field.patchStrategy = prop['x-kubernetes-patch-strategy']
    if (prop['x-kubernetes-patch-merge-key']) field.patchMergeKey = prop['x-kubernetes-patch-merge-key']
    if (prop.enum) field.enum = prop.enum.map(String)
    fields.push(field)
  }
  const unmatched = fields.filter((f) => f.proto === undefined && f.name !== 'apiVersion' && f.name !== 'kind').map((f) => f.name)
  const embedded = embeddedStructs(name, schema, unmatched, pending)
  const inlined = new Set(embedded.flatMap((e) => e.fields))
  if (proto) for (const f of unmatched) if (!inlined.has(f)) warnings.push(`${name}.${f}: no protobuf field`)
  if (!proto && fields.some((f) => f.name !== 'apiVersion' && f.name !== 'kind')) {
    warnings.push(`${name}: no protobuf message (JSON only)`)
  }
  const def: TypeDef = { name, fields }
  if (embedded.length > 0) def.embedded = embedded.map(({ proto: n, type }) => ({ proto: n, type }))
  const gvk = schema['x-kubernetes-group-version-kind']?.[0]
  if (gvk) def.gvk = { group: gvk.group, version: gvk.version, kind: gvk.kind }
  return def
}

restoreDescriptionFields()

// Transitive closure of the roots.
const types = new Map<string, TypeDef>()
const servedKinds = Object.entries(definitions)
  .filter(([name, schema]) =>
    !name.startsWith('io.k8s.apimachinery.') &&
    (schema['x-kubernetes-group-version-kind'] ?? []).some((g) =>
      SERVED_GROUP_VERSIONS.includes(g.group ? `${g.group}/${g.version}` : g.version),
    ),
  )
  .map(([name]) => name)
const pending = [...ROOTS, ...servedKinds]
while (pending.length > 0) {
  const name = pending.pop()!
  if (types.has(name) || SPECIAL_SCALARS[name]) continue
  types.set(name, buildType(name, pending))
}

/** `io.k8s.api.core.v1.X` -> `core-v1`; `io.k8s.apimachinery.pkg.apis.meta.v1.X` -> `meta-v1`. */
function packageOf(name: string): string {
  const pkg = name.slice(0, name.lastIndexOf('.')).split('.')
  const version = pkg[pkg.length - 1]!
  const group = pkg[pkg.length - 2]!
  return `${group}-${version}`
}

function camel(pkg: string): string {
  return pkg.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase())
}

const HEADER = '// Code generated by tools/gen-types.ts from upstream type facts (OpenAPI v2 + protobuf field numbers). DO NOT EDIT.\n// Regenerate: npx tsx tools/gen-types.ts [path/to/reference/openapi]\n'

const byPackage = new Map<string, TypeDef[]>()
for (const def of types.values()) {
  const pkg = packageOf(def.name)
  const list = byPackage.get(pkg) ?? []
  list.push(def)
  byPackage.set(pkg, list)
}

mkdirSync(outDir, { recursive: true })
for (const f of readdirSync(outDir)) if (f.endsWith('.ts')) rmSync(join(outDir, f))

const packages = [...byPackage.keys()].sort()
for (const pkg of packages) {
  const defs = byPackage.get(pkg)!.sort((a, b) => (a.name < b.name ? -1 : 1))
  let text = `${HEADER}import type { TypeTable } from '../model.js'\n\nexport const ${camel(pkg)}Types: TypeTable = {\n`
  for (const def of defs) {
    // One field per line keeps regenerated diffs readable.
    const gvk = def.gvk ? `\n    gvk: ${JSON.stringify(def.gvk)},` : ''
    const embedded = def.embedded ? `\n    embedded: ${JSON.stringify(def.embedded)},` : ''
    const forms = def.jsonForms ? `\n    jsonForms: ${JSON.stringify(def.jsonForms)},` : ''
    const fields = def.fields.map((f) => `      ${JSON.stringify(f)},\n`).join('')
    text += `  ${JSON.stringify(def.name)}: {\n    name: ${JSON.stringify(def.name)},${gvk}${embedded}${forms}\n    fields: [\n${fields}    ],\n  },\n`
  }
  text += '}\n'
  writeFileSync(join(outDir, `${pkg}.ts`), text)
}

// Every group/version/kind a type is served as (DeleteOptions has one per group version).
const kinds: [string, string][] = []
for (const def of types.values()) {
  for (const g of definitions[def.name]?.['x-kubernetes-group-version-kind'] ?? []) {
    kinds.push([`${g.group}/${g.version}/${g.kind}`, def.name])
  }
}
kinds.sort(([a], [b]) => (a < b ? -1 : 1))

let index = `${HEADER}import type { TypeTable } from '../model.js'\n`
for (const pkg of packages) index += `import { ${camel(pkg)}Types } from './${pkg}.js'\n`
index += `\nexport const generatedTypes: TypeTable = {\n${packages.map((p) => `  ...${camel(p)}Types,\n`).join('')}}\n`
index += `\n/** \`group/version/kind\` -> definition name, for every GVK a generated type is served as. */\nexport const generatedKinds: Readonly<Record<string, string>> = {\n`
for (const [k, v] of kinds) index += `  ${JSON.stringify(k)}: ${JSON.stringify(v)},\n`
index += '}\n'
writeFileSync(join(outDir, 'index.ts'), index)

for (const w of warnings.sort()) console.warn(`warning: ${w}`)
console.log(`wrote ${types.size} types in ${packages.length} packages and ${kinds.length} kinds to ${outDir}`)
