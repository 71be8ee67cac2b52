/**
 * OpenAPI v2 (`/openapi/v2`): one Swagger 2.0 document over the whole
 * catalogue, for clients that still read it (older kubectl validation,
 * `kubectl explain --output=plaintext-openapiv2`). It is the v3 document
 * over every group/version rewritten in v2's shape, so the two never
 * disagree: schemas become definitions, request bodies body parameters,
 * media types consumes/produces.
 */
import type { Catalogue } from '../resources/catalogue.js'
import { fnv1a64Hex, type JsonObject, type JsonValue, openApiWholeCatalogue } from './openapi.js'

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

const cache = new WeakMap<Catalogue, { doc: JsonObject; etag: string }>()

export function openApiV2Document(catalogue: Catalogue): { doc: JsonObject; etag: string } {
  const hit = cache.get(catalogue)
  if (hit) return hit
  const v3 = openApiWholeCatalogue(catalogue).doc
  const paths: JsonObject = {}
  for (const [path, item] of Object.entries(isObject(v3['paths']) ? v3['paths'] : {})) paths[path] = pathItem(item)
  const components = isObject(v3['components']) ? v3['components'] : {}
  const doc = rewriteRefs({
    swagger: '2.0',
    info: { title: 'Kubernetes', version: 'unversioned' },
    paths,
    definitions: isObject(components['schemas']) ? components['schemas'] : {},
    securityDefinitions: { BearerToken: { type: 'apiKey', name: 'authorization', in: 'header' } },
    security: [{ BearerToken: [] }],
  }) as JsonObject
  const built = { doc, etag: fnv1a64Hex(JSON.stringify(doc)) }
  cache.set(catalogue, built)
  return built
}
