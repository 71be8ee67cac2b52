/**
 * OpenAPI v2 (`/openapi/v2`): one Swagger 2.0 document over the whole
 * catalogue, for clients that still read it (older kubectl validation,
 * `kubectl explain --output=plaintext-openapiv2`). It is the v3 documents
 * of every group/version rewritten in v2's shape and merged, so the two
 * never disagree: schemas become definitions, request bodies body
 * parameters, media types consumes/produces. Custom resources' schemas come
 * in their v2 flavour (see openapi-crd.ts).
 */
import type { Catalogue } from '../resources/catalogue.js'
import { fnv1a64Hex, type JsonObject, type JsonValue, openApiV2Sources } from './openapi.js'
import { mergeAggregatedV2 } from './openapi-v2-merge.js'

/** An aggregated APIService's v2 document, as the aggregator last downloaded it. */
export interface AggregatedV2Document {
  name: string
  doc: Record<string, unknown>
  etag: string
}

const V3_REF = '#/components/schemas/'
const V2_REF = '#/definitions/'

function isObject(v: JsonValue | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** Rewrites every `$ref` from components to definitions. */
function rewriteRefs(v: JsonValue): JsonValue {
  if (Array.isArray(v)) return v.map(rewriteRefs)
  if (!isObject(v)) return v
  const out: JsonObject = {}
  for (const [k, item] of Object.entries(v)) {
    out[k] = k === '$ref' && typeof item === 'string' ? item.replace(V3_REF, V2_REF) : rewriteRefs(item)
  }
  return out
}

/** A v3 parameter (`schema: {type}`) as a v2 one (`type` inline). */
function parameter(p: JsonValue): JsonValue {
  if (!isObject(p)) return p
  const { schema, ...rest } = p
  return isObject(schema) ? { ...rest, ...schema } : rest
}

function mediaTypes(content: JsonValue | undefined): string[] {
  return isObject(content) ? Object.keys(content) : []
}

function firstSchema(content: JsonValue | undefined): JsonValue | undefined {
  if (!isObject(content)) return undefined
  const first = Object.values(content)[0]
  return isObject(first) ? first['schema'] : undefined
}

function operation(op: JsonObject): JsonObject {
  const out: JsonObject = {}
  const parameters = (Array.isArray(op['parameters']) ? op['parameters'] : []).map(parameter)
  const body = op['requestBody']
  if (isObject(body)) {
    const schema = firstSchema(body['content'])
    parameters.unshift({ name: 'body', in: 'body', required: body['required'] === true, ...(schema ? { schema } : {}) })
    out['consumes'] = mediaTypes(body['content'])
  }
  const produces = new Set<string>()
  const responses: JsonObject = {}
  for (const [code, response] of Object.entries(isObject(op['responses']) ? op['responses'] : {})) {
    if (!isObject(response)) continue
    for (const m of mediaTypes(response['content'])) produces.add(m)
    const schema = firstSchema(response['content'])
    responses[code] = { description: response['description'] ?? '', ...(schema ? { schema } : {}) }
  }
  for (const [k, v] of Object.entries(op)) if (!['parameters', 'requestBody', 'responses'].includes(k)) out[k] = v
  out['parameters'] = parameters
  if (produces.size > 0) out['produces'] = [...produces]
  out['responses'] = responses
  out['schemes'] = ['https']
  return out
}

function pathItem(item: JsonValue): JsonObject {
  const out: JsonObject = {}
  if (!isObject(item)) return out
  for (const [k, v] of Object.entries(item)) {
    if (k === 'parameters' && Array.isArray(v)) out[k] = v.map(parameter)
    else if (isObject(v)) out[k] = operation(v)
  }
  return out
}

/** One group/version's share of the v2 document: its paths and definitions, refs rewritten. */
interface V2Part {
  paths: JsonObject
  definitions: JsonObject
}

/** Keyed by the source document, which openapi.ts rebuilds only when its group/version changes. */
const parts = new WeakMap<JsonObject, V2Part>()

function v2Part(source: JsonObject): V2Part {
  const hit = parts.get(source)
  if (hit) return hit
  const paths: JsonObject = {}
  for (const [path, item] of Object.entries(isObject(source['paths']) ? source['paths'] : {})) paths[path] = pathItem(item)
  const components = isObject(source['components']) ? source['components'] : {}
  const definitions = isObject(components['schemas']) ? components['schemas'] : {}
  const part = rewriteRefs({ paths, definitions }) as unknown as V2Part
  parts.set(source, part)
  return part
}

type Gvk = { group?: JsonValue; version?: JsonValue; kind?: JsonValue }

function gvkTags(schema: JsonValue | undefined): Gvk[] {
  const tags = isObject(schema) ? schema['x-kubernetes-group-version-kind'] : undefined
  return Array.isArray(tags) ? tags.filter(isObject) : []
}

/**
 * A type that several group/versions reference (DeleteOptions, Scale) is
 * described alike in each, but each tags it with the kinds it knows: the
 * merged definition carries every tag once.
 */
function mergeDefinition(kept: JsonValue, other: JsonValue): JsonValue {
  const tags = gvkTags(kept)
  const same = (a: Gvk, b: Gvk): boolean => a.group === b.group && a.version === b.version && a.kind === b.kind
  const extra = gvkTags(other).filter((t) => !tags.some((k) => same(k, t)))
  if (!isObject(kept) || extra.length === 0) return kept
  return { ...kept, 'x-kubernetes-group-version-kind': [...tags, ...extra] as JsonValue[] }
}

const documents = new WeakMap<Catalogue, { doc: JsonObject; etag: string }>()

/**
 * The v2 document and its ETag, the aggregated APIServices' documents
 * merged in (openapi-v2-merge.ts). The server's own part's ETag is a hash of the group/version
 * documents' hashes, so it changes exactly when one of them does (a custom
 * resource added, changed or removed); unchanged parts are not converted again.
 */
export function openApiV2Document(catalogue: Catalogue, aggregated: readonly AggregatedV2Document[] = []): { doc: JsonObject; etag: string } {
  const own = ownV2Document(catalogue)
  if (aggregated.length === 0) return own
  // As upstream, the merged ETag follows the server's own and every extension's: it changes when any of them does.
  const etag = fnv1a64Hex([own.etag, ...aggregated.map((a) => `${a.name}=${a.etag}`)].join('\n'))
  const hit = mergedDocuments.get(catalogue)
  if (hit?.etag === etag) return hit
  const built = { doc: mergeAggregatedV2(own.doc, aggregated.map((a) => a.doc as JsonObject)), etag }
  mergedDocuments.set(catalogue, built)
  return built
}

const mergedDocuments = new WeakMap<Catalogue, { doc: JsonObject; etag: string }>()

function ownV2Document(catalogue: Catalogue): { doc: JsonObject; etag: string } {
  const sources = openApiV2Sources(catalogue)
  const etag = fnv1a64Hex(sources.map((s) => `${s.key}=${s.hash}`).join('\n'))
  const hit = documents.get(catalogue)
  if (hit?.etag === etag) return hit
  const paths: JsonObject = {}
  const definitions: Record<string, JsonValue> = {}
  for (const source of sources) {
    const part = v2Part(source.doc)
    Object.assign(paths, part.paths)
    for (const [name, schema] of Object.entries(part.definitions)) {
      const kept = definitions[name]
      definitions[name] = kept === undefined ? schema : mergeDefinition(kept, schema)
    }
  }
  const sortedDefinitions: JsonObject = {}
  for (const name of Object.keys(definitions).sort()) sortedDefinitions[name] = definitions[name]!
  const doc: JsonObject = {
    swagger: '2.0',
    info: { title: 'Kubernetes', version: 'unversioned' },
    paths,
    definitions: sortedDefinitions,
    securityDefinitions: { BearerToken: { type: 'apiKey', name: 'authorization', in: 'header' } },
    security: [{ BearerToken: [] }],
  }
  const built = { doc, etag }
  documents.set(catalogue, built)
  return built
}
