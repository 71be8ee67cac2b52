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
import type { FieldDef, Scalar, TypeDef, TypeRef } from '../core/resources/schema/model.js'

/** Adding a type to the tables is one line here; its dependencies follow. */
const ROOTS: readonly string[] = [
  'io.k8s.api.core.v1.Namespace',
  'io.k8s.api.core.v1.NamespaceList',
  'io.k8s.api.core.v1.ConfigMap',
  'io.k8s.api.core.v1.ConfigMapList',
  'io.k8s.api.core.v1.Secret',
  'io.k8s.api.core.v1.SecretList',
  'io.k8s.api.core.v1.ServiceAccount',
  'io.k8s.api.core.v1.ServiceAccountList',
  'io.k8s.api.authorization.v1.SelfSubjectAccessReview',
  'io.k8s.api.authorization.v1.SubjectAccessReview',
  'io.k8s.api.authorization.v1.LocalSubjectAccessReview',
  'io.k8s.api.authorization.v1.SelfSubjectRulesReview',
  'io.k8s.api.authentication.v1.SelfSubjectReview',
  'io.k8s.api.authentication.v1.TokenReview',
  'io.k8s.api.authentication.v1.TokenRequest',
  'io.k8s.apimachinery.pkg.apis.meta.v1.Status',
  'io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta',
  'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
  'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions',
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

function buildType(name: string, pending: string[]): TypeDef {
  const schema = definitions[name]
  if (!schema) throw new Error(`unknown definition ${name}`)
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
    } else if (proto && fieldName !== 'apiVersion' && fieldName !== 'kind') {
      warnings.push(`${name}.${fieldName}: no protobuf field`)
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
  if (!proto && fields.some((f) => f.name !== 'apiVersion' && f.name !== 'kind')) {
    warnings.push(`${name}: no protobuf message (JSON only)`)
  }
  const def: TypeDef = { name, fields }
  const gvk = schema['x-kubernetes-group-version-kind']?.[0]
  if (gvk) def.gvk = { group: gvk.group, version: gvk.version, kind: gvk.kind }
  return def
}

// Transitive closure of the roots.
const types = new Map<string, TypeDef>()
const pending = [...ROOTS]
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
    const fields = def.fields.map((f) => `      ${JSON.stringify(f)},\n`).join('')
    text += `  ${JSON.stringify(def.name)}: {\n    name: ${JSON.stringify(def.name)},${gvk}\n    fields: [\n${fields}    ],\n  },\n`
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
