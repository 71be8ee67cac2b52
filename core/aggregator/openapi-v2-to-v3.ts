/**
 * An extension server's `/openapi/v2` document in OpenAPI v3's shape, for a
 * server that publishes no `/openapi/v3` (upstream's aggregator serves the
 * converted document for such a "legacy" APIService, as kube-openapi's
 * openapiconv does): definitions become component schemas, a body parameter
 * the request body (one media type per `consumes`), response schemas content
 * (one per `produces`), other parameters' types a schema. Lossy, as upstream's.
 */
import { isPlainObject } from '../machinery/object.js'
import { type Checkpointed, runAtOnce, StepCounter } from '../machinery/time-slice.js'

type Json = Record<string, unknown>

const V2_REF = '#/definitions/'
const V3_REF = '#/components/schemas/'
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'] as const
/** The members of a v2 non-body parameter that describe its value (a schema in v3). */
const VALUE_KEYS = ['type', 'format', 'items', 'collectionFormat', 'default', 'maximum', 'minimum', 'maxLength', 'minLength', 'pattern', 'enum', 'uniqueItems']

/** A copy with every v2 `$ref` pointing at the v3 components, with checkpoints: the document may be megabytes. */
function* rewriteRefs(value: unknown, steps: StepCounter): Checkpointed<unknown> {
  if (steps.add()) yield
  if (Array.isArray(value)) {
    const out: unknown[] = []
    for (const item of value) out.push(yield* rewriteRefs(item, steps))
    return out
  }
  if (!isPlainObject(value)) return value
  const out: Json = {}
  for (const [key, item] of Object.entries(value)) {
    out[key] = key === '$ref' && typeof item === 'string' && item.startsWith(V2_REF) ? V3_REF + item.slice(V2_REF.length) : yield* rewriteRefs(item, steps)
  }
  return out
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : [])

function parameter(p: Json): Json {
  const out: Json = {}
  const schema: Json = {}
  for (const [key, value] of Object.entries(p)) {
    if (key === 'collectionFormat') continue
    if (VALUE_KEYS.includes(key)) schema[key] = value
    else out[key] = value
  }
  if (Object.keys(schema).length > 0) out['schema'] = schema
  return out
}

function operation(op: Json, consumes: string[], produces: string[]): Json {
  const out: Json = {}
  const ownConsumes = op['consumes'] === undefined ? consumes : strings(op['consumes'])
  const ownProduces = op['produces'] === undefined ? produces : strings(op['produces'])
  const parameters: Json[] = []
  for (const p of Array.isArray(op['parameters']) ? op['parameters'] : []) {
    if (!isPlainObject(p)) continue
    if (p['in'] === 'body') {
      const types = ownConsumes.length > 0 ? ownConsumes : ['application/json']
      out['requestBody'] = {
        content: Object.fromEntries(types.map((t) => [t, { schema: p['schema'] ?? {} }])),
        ...(p['required'] === true ? { required: true } : {}),
        ...(typeof p['description'] === 'string' ? { description: p['description'] } : {}),
      }
    } else parameters.push(p['$ref'] === undefined ? parameter(p) : p)
  }
  const responses: Json = {}
  for (const [code, response] of Object.entries(isPlainObject(op['responses']) ? op['responses'] : {})) {
    if (!isPlainObject(response)) continue
    const { schema, ...rest } = response
    responses[code] = schema === undefined ? rest : { ...rest, content: Object.fromEntries((ownProduces.length > 0 ? ownProduces : ['application/json']).map((t) => [t, { schema }])) }
  }
  for (const [key, value] of Object.entries(op)) if (!['parameters', 'responses', 'consumes', 'produces', 'schemes'].includes(key)) out[key] = value
  if (parameters.length > 0) out['parameters'] = parameters
  out['responses'] = responses
  return out
}

export function openApiV2ToV3(v2: Json): Json {
  return runAtOnce(openApiV2ToV3InSteps(v2))
}

/**
 * The same conversion as checkpointed work (runInSlices): an extension
 * server's 15 MiB document, converted at once, held the thread for half a
 * second.
 */
export function* openApiV2ToV3InSteps(v2: Json): Checkpointed<Json> {
  const steps = new StepCounter()
  const consumes = strings(v2['consumes'])
  const produces = strings(v2['produces'])
  const paths: Json = {}
  for (const [path, item] of Object.entries(isPlainObject(v2['paths']) ? v2['paths'] : {})) {
    if (!isPlainObject(item)) continue
    const converted: Json = {}
    for (const [key, value] of Object.entries(item)) {
      if ((METHODS as readonly string[]).includes(key) && isPlainObject(value)) converted[key] = operation(value, consumes, produces)
      else if (key === 'parameters' && Array.isArray(value)) converted[key] = value.filter(isPlainObject).map((p) => (p['$ref'] === undefined ? parameter(p) : p))
      else converted[key] = value
    }
    paths[path] = converted
    if (steps.add()) yield
  }
  const components: Json = {}
  if (isPlainObject(v2['definitions'])) components['schemas'] = v2['definitions']
  if (isPlainObject(v2['securityDefinitions'])) components['securitySchemes'] = v2['securityDefinitions']
  return (yield* rewriteRefs(
    {
    openapi: '3.0.0',
    info: v2['info'] ?? {},
    paths,
    ...(Object.keys(components).length > 0 ? { components } : {}),
      ...(v2['security'] !== undefined ? { security: v2['security'] } : {}),
    },
    steps,
  )) as Json
}
