/**
 * OpenAPI v3 (`/openapi/v3` and one document per group/version), derived from
 * the catalogue and the type table. kubectl reads it to decide on server-side
 * field validation (a PATCH operation with the kind's GVK and a
 * `fieldValidation` parameter), on strategic merge for `apply` (the patch
 * media types and merge keys) and for `explain` (kubectl-wire.md 3.6, 3.13, 6).
 */
import type { Catalogue, ResourceEntry, SubresourceEntry, Verb } from '../resources/catalogue.js'
import type { FieldDef, TypeRef } from '../resources/schema/index.js'
import { kindsOfType, typeForKind, typeTable } from '../resources/schema/index.js'
import {
  customResourceListName,
  customResourceListSchema,
  customResourceSchema,
  LIST_META,
  OBJECT_META,
  type OpenApiFlavour,
} from './openapi-crd.js'

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue }
export type JsonObject = { [key: string]: JsonValue }

export interface OpenApiIndex {
  paths: Record<string, { serverRelativeURL: string }>
}

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1'
const STATUS = `${META}.Status`
const DELETE_OPTIONS = `${META}.DeleteOptions`
const PATCH = `${META}.Patch`
/** What a custom resource's scale subresource reads and writes. */
const SCALE = 'io.k8s.api.autoscaling.v1.Scale'

/** Named schemas for the special scalars, so `explain` shows their names as upstream does. */
const SCALAR_SCHEMAS: Readonly<Record<string, [name: string, schema: JsonObject]>> = {
  time: [`${META}.Time`, { type: 'string', format: 'date-time' }],
  microtime: [`${META}.MicroTime`, { type: 'string', format: 'date-time' }],
  quantity: ['io.k8s.apimachinery.pkg.api.resource.Quantity', { type: 'string' }],
  'int-or-string': [
    'io.k8s.apimachinery.pkg.util.intstr.IntOrString',
    { type: 'string', format: 'int-or-string', 'x-kubernetes-int-or-string': true },
  ],
}

const PATCH_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
]

/** Custom resources have no Go struct to carry patch strategies: no strategic merge. */
const CUSTOM_RESOURCE_PATCH_TYPES = PATCH_TYPES.filter((t) => t !== 'application/strategic-merge-patch+json')

/** `api/v1` for the core group, `apis/<group>/<version>` otherwise: the index key and URL path. */
export function openApiKey(group: string, version: string): string {
  return group ? `apis/${group}/${version}` : `api/${version}`
}

interface Built {
  doc: JsonObject
  hash: string
}

/** The documents of one group/version, built from a snapshot of its entries. */
interface GroupVersionDocs {
  entries: readonly ResourceEntry[]
  built: Partial<Record<OpenApiFlavour, Built>>
}

interface CatalogueDocs {
  /** The catalogue generation `byKey` was last checked against. */
  generation: number
  byKey: Map<string, GroupVersionDocs>
}

const cache = new WeakMap<Catalogue, CatalogueDocs>()

function entriesByKey(catalogue: Catalogue): Map<string, ResourceEntry[]> {
  const byKey = new Map<string, ResourceEntry[]>()
  for (const e of catalogue.entries) {
    const key = openApiKey(e.group, e.version)
    const list = byKey.get(key)
    if (list) list.push(e)
    else byKey.set(key, [e])
  }
  return byKey
}

function sameEntries(a: readonly ResourceEntry[], b: readonly ResourceEntry[]): boolean {
  return a.length === b.length && a.every((e, i) => e === b[i])
}

/**
 * The cached documents, after forgetting those of the group/versions a
 * catalogue change touched (custom resources come and go at run time). The
 * others keep their document, and so their hash: clients' caches of them stay good.
 */
function docsOf(catalogue: Catalogue): CatalogueDocs {
  const docs = cache.get(catalogue)
  if (!docs) {
    const fresh = { generation: catalogue.generation, byKey: new Map<string, GroupVersionDocs>() }
    cache.set(catalogue, fresh)
    return fresh
  }
  if (docs.generation !== catalogue.generation) {
    const current = entriesByKey(catalogue)
    for (const [key, gv] of docs.byKey) {
      const now = current.get(key)
      if (!now || !sameEntries(now, gv.entries)) docs.byKey.delete(key)
    }
    docs.generation = catalogue.generation
  }
  return docs
}

function built(catalogue: Catalogue, key: string, flavour: OpenApiFlavour = 'v3'): Built | undefined {
  const docs = docsOf(catalogue)
  let gv = docs.byKey.get(key)
  if (!gv) {
    const entries = entriesByKey(catalogue).get(key)
    if (!entries) return undefined
    gv = { entries, built: {} }
    docs.byKey.set(key, gv)
  }
  const hit = gv.built[flavour]
  if (hit) return hit
  // Only custom resources differ between the flavours.
  const result =
    flavour === 'v2' && !gv.entries.some((e) => e.schema) ? built(catalogue, key, 'v3')! : hashed(buildDocument(gv.entries, flavour))
  gv.built[flavour] = result
  return result
}

function hashed(doc: JsonObject): Built {
  return { doc, hash: fnv1a64Hex(JSON.stringify(doc)) }
}

/**
 * The sources of the OpenAPI v2 document: one v3-shaped document per
 * group/version, in discovery order, with custom resources' schemas in the
 * v2 flavour. Each is rebuilt only when its group/version changed.
 */
export function openApiV2Sources(catalogue: Catalogue): { key: string; doc: JsonObject; hash: string }[] {
  return catalogue.groupVersions().map(({ group, version }) => {
    const key = openApiKey(group, version)
    return { key, ...built(catalogue, key, 'v2')! }
  })
}

export function openApiIndex(catalogue: Catalogue): OpenApiIndex {
  const paths: Record<string, { serverRelativeURL: string }> = {}
  for (const { group, version } of catalogue.groupVersions()) {
    const key = openApiKey(group, version)
    const b = built(catalogue, key)!
    paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${b.hash}` }
  }
  return { paths }
}

/** The document for one index key (`api/v1`, `apis/apps/v1`), built once per catalogue state. */
export function openApiDocument(catalogue: Catalogue, key: string): object | undefined {
  return built(catalogue, key)?.doc
}

/** The hash in the document's URL; changes whenever the document does. */
export function openApiHash(catalogue: Catalogue, key: string): string | undefined {
  return built(catalogue, key)?.hash
}

/**
 * FNV-1a, 64 bits, over the UTF-8 bytes. The state is four 16-bit limbs, so
 * that every product and carry stays a small integer (no BigInt, no floating
 * division per byte): a document of some hundred kilobytes was hashed at a
 * few megabytes a second before. Only a cache key for clients, not a
 * security boundary.
 */
export function fnv1a64Hex(text: string): string {
  const bytes = new TextEncoder().encode(text)
  // The offset basis 0xcbf29ce484222325, lowest limb first.
  let h0 = 0x2325
  let h1 = 0x8422
  let h2 = 0x9ce4
  let h3 = 0xcbf2
  for (let i = 0; i < bytes.length; i++) {
    h0 ^= bytes[i]!
    // Times the FNV prime 2^40 + 0x1b3, modulo 2^64: each limb by 0x1b3, plus the state shifted up by 40 bits.
    const t0 = h0 * 0x1b3
    const t1 = h1 * 0x1b3 + (t0 >>> 16)
    const t2 = h2 * 0x1b3 + (t1 >>> 16) + ((h0 & 0xff) << 8)
    const t3 = h3 * 0x1b3 + (t2 >>> 16) + (h0 >>> 8) + ((h1 & 0xff) << 8)
    h0 = t0 & 0xffff
    h1 = t1 & 0xffff
    h2 = t2 & 0xffff
    h3 = t3 & 0xffff
  }
  const hex = (limb: number): string => limb.toString(16).padStart(4, '0')
  return (hex(h3) + hex(h2) + hex(h1) + hex(h0)).toUpperCase()
}

// ---- document ----

function buildDocument(entries: readonly ResourceEntry[], flavour: OpenApiFlavour): JsonObject {
  const schemas = new SchemaSet(flavour)
  const paths: Record<string, JsonObject> = {}
  for (const entry of entries) addResourcePaths(paths, entry, schemas)
  // Referenced by every delete and patch operation, and the shape of every error.
  for (const name of [STATUS, DELETE_OPTIONS, PATCH]) schemas.add(name)
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: 'unversioned' },
    paths,
    components: {
      schemas: schemas.output(),
      securitySchemes: { BearerToken: { type: 'apiKey', name: 'authorization', in: 'header' } },
    },
    security: [{ BearerToken: [] }],
  }
}

function ref(name: string): JsonObject {
  return { $ref: `#/components/schemas/${name}` }
}

function queryParam(name: string, type: 'string' | 'boolean' | 'integer'): JsonObject {
  return { name, in: 'query', schema: { type, uniqueItems: true } }
}

function pathParam(name: string): JsonObject {
  return { name, in: 'path', required: true, schema: { type: 'string', uniqueItems: true } }
}

const WRITE_PARAMS = [queryParam('dryRun', 'string'), queryParam('fieldManager', 'string'), queryParam('fieldValidation', 'string')]
const LIST_PARAMS = [
  queryParam('allowWatchBookmarks', 'boolean'),
  queryParam('continue', 'string'),
  queryParam('fieldSelector', 'string'),
  queryParam('labelSelector', 'string'),
  queryParam('limit', 'integer'),
  queryParam('resourceVersion', 'string'),
  queryParam('resourceVersionMatch', 'string'),
  queryParam('sendInitialEvents', 'boolean'),
  queryParam('timeoutSeconds', 'integer'),
]
const DELETE_PARAMS = [
  queryParam('dryRun', 'string'),
  queryParam('gracePeriodSeconds', 'integer'),
  queryParam('ignoreStoreReadErrorWithClusterBreakingPotential', 'boolean'),
  queryParam('orphanDependents', 'boolean'),
  queryParam('propagationPolicy', 'string'),
]

function content(mediaTypes: readonly string[], schema: JsonObject): JsonObject {
  const out: JsonObject = {}
  for (const m of mediaTypes) out[m] = { schema }
  return out
}

type Action = 'get' | 'list' | 'post' | 'put' | 'patch' | 'delete' | 'deletecollection'

interface OperationSpec {
  action: Action
  /** the schema answered and accepted (the kind, its list, or the subresource's kind) */
  schemaName: string
  gvk: { group: string; version: string; kind: string }
  operationId: string
  protobuf: boolean
  patchTypes: readonly string[]
}

function operation(spec: OperationSpec): JsonObject {
  const kindSchema = ref(spec.schemaName)
  const answers = spec.protobuf
    ? ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf']
    : ['application/json', 'application/yaml']
  const ok = (schema: JsonObject): JsonObject => ({ description: 'OK', content: content(answers, schema) })
  const op: JsonObject = { operationId: spec.operationId }
  let parameters: JsonObject[] = []
  let responses: JsonObject = {}
  switch (spec.action) {
    case 'get':
      responses = { '200': ok(kindSchema) }
      break
    case 'list':
      parameters = [...LIST_PARAMS, queryParam('watch', 'boolean')]
      responses = { '200': ok(kindSchema) }
      break
    case 'post':
    case 'put':
      parameters = WRITE_PARAMS
      op['requestBody'] = { content: content(answers, kindSchema), required: true }
      responses =
        spec.action === 'post'
          ? { '200': ok(kindSchema), '201': { ...ok(kindSchema), description: 'Created' }, '202': { ...ok(kindSchema), description: 'Accepted' } }
          : { '200': ok(kindSchema), '201': { ...ok(kindSchema), description: 'Created' } }
      break
    case 'patch':
      parameters = [...WRITE_PARAMS, queryParam('force', 'boolean')]
      op['requestBody'] = { content: content(spec.patchTypes, ref(PATCH)), required: true }
      responses = { '200': ok(kindSchema), '201': { ...ok(kindSchema), description: 'Created' } }
      break
    case 'delete':
    case 'deletecollection':
      parameters = spec.action === 'delete' ? DELETE_PARAMS : [...DELETE_PARAMS, ...LIST_PARAMS]
      op['requestBody'] = { content: content(['*/*'], ref(DELETE_OPTIONS)) }
      responses = { '200': ok(ref(STATUS)), '202': { ...ok(ref(STATUS)), description: 'Accepted' } }
      break
  }
  op['parameters'] = parameters
  op['responses'] = { ...responses, '401': { description: 'Unauthorized' } }
  op['x-kubernetes-action'] = spec.action
  op['x-kubernetes-group-version-kind'] = spec.gvk
  return op
}

/**
 * `CoreV1`, `AppsV1`, `StableExampleComV1` as in upstream's operation ids:
 * `.k8s.io` dropped, every other character but letters, digits and `_`
 * starts a new capitalised word (a leading digit is dropped too).
 */
function gvIdentifier(group: string, version: string): string {
  const name = group === '' ? 'core' : group.replace(/\.k8s\.io$/, '')
  return operationIdWord(name) + operationIdWord(version)
}

function operationIdWord(text: string): string {
  let out = ''
  let capitalize = true
  for (const [i, ch] of [...text].entries()) {
    if (/\p{L}|_/u.test(ch) || (i > 0 && /\p{Nd}/u.test(ch))) {
      out += capitalize ? ch.toUpperCase() : ch
      capitalize = false
    } else {
      capitalize = true
    }
  }
  return out
}

function hasProtobuf(typeName: string): boolean {
  return typeTable[typeName]?.fields.some((f) => f.proto !== undefined) ?? false
}

function addResourcePaths(paths: Record<string, JsonObject>, entry: ResourceEntry, schemas: SchemaSet): void {
  const prefix = `/${openApiKey(entry.group, entry.version)}`
  const gvk = { group: entry.group, version: entry.version, kind: entry.kind }
  const gvId = gvIdentifier(entry.group, entry.version)
  const can = (v: Verb): boolean => entry.verbs.includes(v)
  const custom = entry.schema !== undefined
  const [kindSchema, listSchema] = custom ? schemas.addCustomResource(entry) : builtinKindSchemas(entry, schemas)
  const protobuf = hasProtobuf(entry.typeName)
  const patchTypes = custom ? CUSTOM_RESOURCE_PATCH_TYPES : PATCH_TYPES
  const scope = entry.namespaced ? 'Namespaced' : ''
  const spec = (action: Action, schemaName: string, id: string): JsonObject =>
    operation({ action, schemaName, gvk, operationId: id, protobuf, patchTypes })
  const params = (namespaced: boolean, named: boolean): JsonObject[] => [
    ...(named ? [pathParam('name')] : []),
    ...(namespaced ? [pathParam('namespace')] : []),
    queryParam('pretty', 'string'),
  ]

  const collectionPath = entry.namespaced
    ? `${prefix}/namespaces/{namespace}/${entry.resource}`
    : `${prefix}/${entry.resource}`
  const collection: JsonObject = {}
  if (can('list')) collection['get'] = spec('list', listSchema, `list${gvId}${scope}${entry.kind}`)
  if (can('create')) collection['post'] = spec('post', kindSchema, `create${gvId}${scope}${entry.kind}`)
  if (can('deletecollection')) {
    collection['delete'] = spec('deletecollection', kindSchema, `deletecollection${gvId}${scope}${entry.kind}`)
  }
  if (Object.keys(collection).length > 0) {
    paths[collectionPath] = { ...collection, parameters: params(entry.namespaced, false) }
  }

  if (entry.namespaced && can('list')) {
    paths[`${prefix}/${entry.resource}`] = {
      get: spec('list', listSchema, `list${gvId}${entry.kind}ForAllNamespaces`),
      parameters: params(false, false),
    }
  }

  const itemPath = `${collectionPath}/{name}`
  const item: JsonObject = {}
  if (can('get')) item['get'] = spec('get', kindSchema, `read${gvId}${scope}${entry.kind}`)
  if (can('update')) item['put'] = spec('put', kindSchema, `replace${gvId}${scope}${entry.kind}`)
  if (can('patch')) item['patch'] = spec('patch', kindSchema, `patch${gvId}${scope}${entry.kind}`)
  if (can('delete')) item['delete'] = spec('delete', kindSchema, `delete${gvId}${scope}${entry.kind}`)
  if (Object.keys(item).length > 0) paths[itemPath] = { ...item, parameters: params(entry.namespaced, true) }

  // Streaming and proxy endpoints (exec, log, proxy) carry no object schema; they are left out.
  for (const sub of (entry.subresources ?? []).filter((s) => !s.connect)) {
    const { schemaName: subSchema, gvk: subGvk, protobuf: subProtobuf } = custom
      ? customSubresource(sub, kindSchema, gvk, schemas)
      : builtinSubresource(sub, entry, kindSchema, schemas)
    const suffix = sub.name.charAt(0).toUpperCase() + sub.name.slice(1)
    const subSpec = (action: Action, id: string): JsonObject =>
      operation({ action, schemaName: subSchema, gvk: subGvk, operationId: id, protobuf: subProtobuf, patchTypes })
    const ops: JsonObject = {}
    const has = (v: Verb): boolean => sub.verbs.includes(v)
    if (has('get')) ops['get'] = subSpec('get', `read${gvId}${scope}${entry.kind}${suffix}`)
    if (has('create')) ops['post'] = subSpec('post', `create${gvId}${scope}${entry.kind}${suffix}`)
    if (has('update')) ops['put'] = subSpec('put', `replace${gvId}${scope}${entry.kind}${suffix}`)
    if (has('patch')) ops['patch'] = subSpec('patch', `patch${gvId}${scope}${entry.kind}${suffix}`)
    if (Object.keys(ops).length > 0) paths[`${itemPath}/${sub.name}`] = { ...ops, parameters: params(entry.namespaced, true) }
  }
}

function builtinKindSchemas(entry: ResourceEntry, schemas: SchemaSet): [kind: string, list: string] {
  const gvk = { group: entry.group, version: entry.version, kind: entry.kind }
  const listName = typeForKind(entry.group, entry.version, entry.listKind)?.name ?? `${entry.typeName}List`
  return [schemas.addKind(entry.typeName, gvk), schemas.addKind(listName, { ...gvk, kind: entry.listKind })]
}

interface SubresourceSchema {
  schemaName: string
  gvk: { group: string; version: string; kind: string }
  protobuf: boolean
}

/** A built-in subresource answers its own kind (autoscaling/v1 Scale, Binding, ...) when it has one. */
function builtinSubresource(sub: SubresourceEntry, entry: ResourceEntry, kindSchema: string, schemas: SchemaSet): SubresourceSchema {
  const gvk = { group: sub.group ?? entry.group, version: sub.version ?? entry.version, kind: sub.kind }
  const subType = typeForKind(gvk.group, gvk.version, gvk.kind)?.name
  if (!subType) return { schemaName: kindSchema, gvk, protobuf: hasProtobuf(entry.typeName) }
  return { schemaName: schemas.addKind(subType, gvk), gvk, protobuf: hasProtobuf(subType) }
}

/**
 * A custom resource's status answers the resource itself, its scale an
 * autoscaling/v1 Scale; upstream tags both operations with the custom
 * resource's own GVK, and offers JSON and YAML only.
 */
function customSubresource(
  sub: SubresourceEntry,
  kindSchema: string,
  gvk: { group: string; version: string; kind: string },
  schemas: SchemaSet,
): SubresourceSchema {
  if (sub.name !== 'scale') return { schemaName: kindSchema, gvk, protobuf: false }
  schemas.add(SCALE)
  return { schemaName: SCALE, gvk, protobuf: false }
}

// ---- schemas ----

/** The component schemas of one document: every type reachable from its kinds. */
class SchemaSet {
  private readonly schemas = new Map<string, JsonObject>()

  constructor(private readonly flavour: OpenApiFlavour) {}

  /** A custom resource's kind and list, from its CRD schema; returns their names. */
  addCustomResource(entry: ResourceEntry): [kind: string, list: string] {
    const gvk = { group: entry.group, version: entry.version, kind: entry.kind }
    const listName = customResourceListName(entry.typeName, entry.listKind)
    this.schemas.set(entry.typeName, customResourceSchema(entry.schema ?? {}, gvk, this.flavour))
    this.schemas.set(listName, customResourceListSchema(entry.typeName, { ...gvk, kind: entry.listKind }))
    this.add(OBJECT_META)
    this.add(LIST_META)
    return [entry.typeName, listName]
  }

  /**
   * A top-level kind. Kinds without a type in the table (custom resources with
   * no schema yet) get an open object schema, still tagged with their GVK.
   */
  addKind(name: string, gvk: { group: string; version: string; kind: string }): string {
    if (typeTable[name]) {
      this.add(name)
      const schema = this.schemas.get(name)!
      const tagged = (schema['x-kubernetes-group-version-kind'] ?? []) as JsonObject[]
      if (!tagged.some((g) => g['group'] === gvk.group && g['version'] === gvk.version && g['kind'] === gvk.kind)) {
        schema['x-kubernetes-group-version-kind'] = [...tagged, gvk]
      }
    } else if (!this.schemas.has(name)) {
      this.schemas.set(name, {
        type: 'object',
        'x-kubernetes-preserve-unknown-fields': true,
        'x-kubernetes-group-version-kind': [gvk],
      })
    }
    return name
  }

  add(name: string): void {
    if (this.schemas.has(name)) return
    if (name === PATCH) {
      this.schemas.set(name, { type: 'object' })
      return
    }
    const def = typeTable[name]
    if (!def) throw new Error(`type ${name} is missing from the type table`)
    if (def.jsonForms) {
      // Upstream publishes hand-marshalled types (JSONSchemaPropsOrBool ...) with no type: any of their JSON forms.
      this.schemas.set(name, {})
      return
    }
    const schema: JsonObject = { type: 'object' }
    // Registered before the fields are walked, so recursive types terminate.
    this.schemas.set(name, schema)
    const properties: JsonObject = {}
    for (const field of def.fields) properties[field.name] = this.fieldSchema(field)
    schema['properties'] = properties
    const required = def.fields.filter((f) => f.required).map((f) => f.name)
    if (required.length > 0) schema['required'] = required
    const kinds = kindsOfType(name)
    if (kinds.length > 0) schema['x-kubernetes-group-version-kind'] = kinds
  }

  private fieldSchema(field: FieldDef): JsonObject {
    const schema = this.typeSchema(field.type)
    const extensions: JsonObject = {}
    if (field.enum) extensions['enum'] = field.enum
    if (field.listType) extensions['x-kubernetes-list-type'] = field.listType
    if (field.listMapKeys) extensions['x-kubernetes-list-map-keys'] = field.listMapKeys
    if (field.patchMergeKey) extensions['x-kubernetes-patch-merge-key'] = field.patchMergeKey
    if (field.patchStrategy) extensions['x-kubernetes-patch-strategy'] = field.patchStrategy
    if (Object.keys(extensions).length === 0) return schema
    // Siblings of a $ref are ignored in OpenAPI 3.0, so a ref with extensions is wrapped, as upstream does.
    if ('$ref' in schema) return { allOf: [schema], ...extensions }
    return { ...schema, ...extensions }
  }

  private typeSchema(t: TypeRef): JsonObject {
    if ('ref' in t) {
      this.add(t.ref)
      return ref(t.ref)
    }
    if ('array' in t) return { type: 'array', items: this.typeSchema(t.array) }
    if ('map' in t) return { type: 'object', additionalProperties: this.typeSchema(t.map) }
    const named = SCALAR_SCHEMAS[t.scalar]
    if (named) {
      if (!this.schemas.has(named[0])) this.schemas.set(named[0], named[1])
      return ref(named[0])
    }
    switch (t.scalar) {
      case 'string':
      case 'duration':
        return { type: 'string' }
      case 'boolean':
        return { type: 'boolean' }
      case 'int32':
      case 'int64':
        return { type: 'integer', format: t.scalar }
      case 'double':
        return { type: 'number', format: 'double' }
      case 'bytes':
        return { type: 'string', format: 'byte' }
      default:
        // raw: any JSON (RawExtension, FieldsV1, JSON)
        return { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }
    }
  }

  output(): JsonObject {
    const out: JsonObject = {}
    for (const name of [...this.schemas.keys()].sort()) out[name] = this.schemas.get(name)!
    return out
  }
}
