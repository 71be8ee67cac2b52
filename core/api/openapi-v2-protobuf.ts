/**
 * The OpenAPI v2 document in protobuf, as upstream serves it to clients that
 * ask for `application/com.github.proto-openapi.spec.v2[@.]v1.0+protobuf`
 * (kubectl's client-side validation, `kubectl explain
 * --output=plaintext-openapiv2`, apply's patch metadata): gnostic's
 * `openapi.v2.Document` message, made from the JSON document the way
 * gnostic's parser makes it. Vendor extensions, defaults, examples and enum
 * values travel as `Any` messages holding their YAML text, which is what
 * clients read back. Fields are written in field-number order; proto3
 * leaves out empty strings, false and zero.
 */
import { stringify as toYaml } from 'yaml'
import { utf8, Writer } from '../encoding/protobuf/wire.js'
import { type Checkpointed, runAtOnce } from '../machinery/time-slice.js'

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
type JsonObject = { [key: string]: Json }

function isObject(v: Json | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** One message under construction; each method writes a field if it has a (non-default) value. */
class Message {
  private readonly w = new Writer()

  string(field: number, v: Json | undefined): this {
    if (typeof v === 'string' && v !== '') this.w.lenDelimited(field, utf8.encode(v))
    return this
  }

  strings(field: number, v: Json | undefined): this {
    if (Array.isArray(v)) for (const s of v) if (typeof s === 'string') this.w.lenDelimited(field, utf8.encode(s))
    return this
  }

  bool(field: number, v: Json | undefined): this {
    if (v === true) {
      this.w.tag(field, 0)
      this.w.varint(1)
    }
    return this
  }

  int(field: number, v: Json | undefined): this {
    if (typeof v === 'number' && v !== 0 && Number.isInteger(v)) {
      this.w.tag(field, 0)
      this.w.varint(v)
    }
    return this
  }

  double(field: number, v: Json | undefined): this {
    if (typeof v === 'number' && v !== 0) this.w.double(field, v)
    return this
  }

  message(field: number, bytes: Uint8Array | undefined): this {
    if (bytes) this.w.lenDelimited(field, bytes)
    return this
  }

  messages(field: number, items: readonly Uint8Array[]): this {
    for (const b of items) this.w.lenDelimited(field, b)
    return this
  }

  /** An `Any` holding a value's YAML text (gnostic's form of untyped values). */
  any(field: number, v: Json | undefined): this {
    return v === undefined ? this : this.message(field, anyOf(v))
  }

  /** Every `x-` key of `obj` as a repeated NamedAny. */
  extensions(field: number, obj: JsonObject): this {
    for (const [k, v] of Object.entries(obj)) if (k.startsWith('x-')) this.message(field, named(k, anyOf(v)))
    return this
  }

  finish(): Uint8Array {
    return this.w.finish()
  }
}

/**
 * Values' YAML texts by their JSON text: the same extension values recur
 * throughout the document (list-map keys, group-version-kind tags, a type's
 * validation rules in every version), and the yaml package makes a document
 * per value. Cleared once it holds this many.
 */
const YAML_TEXTS_KEPT = 20_000
const yamlTexts = new Map<string, string>()

function yamlText(v: Json): string {
  if (typeof v === 'string' || typeof v === 'boolean' || v === null) return toYaml(v)
  const json = JSON.stringify(v)
  let text = yamlTexts.get(json)
  if (text === undefined) {
    if (yamlTexts.size >= YAML_TEXTS_KEPT) yamlTexts.clear()
    yamlTexts.set(json, (text = toYaml(v)))
  }
  return text
}

function anyOf(v: Json): Uint8Array {
  return new Message().string(2, yamlText(v)).finish()
}

/** gnostic's Named* pairs: name 1, value 2. */
function named(name: string, value: Uint8Array): Uint8Array {
  const m = new Message().string(1, name)
  // An empty value message still marks the entry.
  return m.message(2, value).finish()
}

function namedMap(obj: Json | undefined, encode: (v: Json) => Uint8Array | undefined): Uint8Array[] {
  if (!isObject(obj)) return []
  const out: Uint8Array[] = []
  for (const [k, v] of Object.entries(obj)) {
    const value = encode(v)
    if (value) out.push(named(k, value))
  }
  return out
}

function externalDocs(v: Json | undefined): Uint8Array | undefined {
  if (!isObject(v)) return undefined
  return new Message().string(1, v['description']).string(2, v['url']).extensions(3, v).finish()
}

function schema(v: Json): Uint8Array | undefined {
  if (!isObject(v)) return undefined
  const m = new Message()
    .string(1, v['$ref'])
    .string(2, v['format'])
    .string(3, v['title'])
    .string(4, v['description'])
    .any(5, v['default'])
    .double(6, v['multipleOf'])
    .double(7, v['maximum'])
    .bool(8, v['exclusiveMaximum'])
    .double(9, v['minimum'])
    .bool(10, v['exclusiveMinimum'])
    .int(11, v['maxLength'])
    .int(12, v['minLength'])
    .string(13, v['pattern'])
    .int(14, v['maxItems'])
    .int(15, v['minItems'])
    .bool(16, v['uniqueItems'])
    .int(17, v['maxProperties'])
    .int(18, v['minProperties'])
    .strings(19, v['required'])
  for (const e of Array.isArray(v['enum']) ? v['enum'] : []) m.any(20, e)
  m.message(21, additionalProperties(v['additionalProperties']))
  const type = v['type']
  if (type !== undefined) m.message(22, new Message().strings(1, Array.isArray(type) ? type : [type]).finish())
  const items = schema(v['items'] ?? null)
  if (items) m.message(23, new Message().message(1, items).finish())
  m.messages(24, (Array.isArray(v['allOf']) ? v['allOf'] : []).map(schema).filter((b) => b !== undefined))
  if (isObject(v['properties'])) m.message(25, new Message().messages(1, namedMap(v['properties'], schema)).finish())
  return m
    .string(26, v['discriminator'])
    .bool(27, v['readOnly'])
    .message(29, externalDocs(v['externalDocs']))
    .any(30, v['example'])
    .extensions(31, v)
    .finish()
}

function additionalProperties(v: Json | undefined): Uint8Array | undefined {
  if (typeof v === 'boolean') {
    // A oneof member is written even when false.
    const w = new Writer()
    w.tag(2, 0)
    w.varint(v ? 1 : 0)
    return w.finish()
  }
  const s = v === undefined ? undefined : schema(v)
  return s && new Message().message(1, s).finish()
}

function primitivesItems(v: Json | undefined): Uint8Array | undefined {
  if (!isObject(v)) return undefined
  const m = new Message()
    .string(1, v['type'])
    .string(2, v['format'])
    .message(3, primitivesItems(v['items']))
    .string(4, v['collectionFormat'])
    .any(5, v['default'])
    .double(6, v['maximum'])
    .bool(7, v['exclusiveMaximum'])
    .double(8, v['minimum'])
    .bool(9, v['exclusiveMinimum'])
    .int(10, v['maxLength'])
    .int(11, v['minLength'])
    .string(12, v['pattern'])
    .int(13, v['maxItems'])
    .int(14, v['minItems'])
    .bool(15, v['uniqueItems'])
  for (const e of Array.isArray(v['enum']) ? v['enum'] : []) m.any(16, e)
  return m.double(17, v['multipleOf']).extensions(18, v).finish()
}

/**
 * A query, path, header or formData parameter. The four sub-schemas share
 * one layout except that query and formData carry allowEmptyValue (5),
 * which moves their later fields up by one.
 */
function nonBodyParameter(p: JsonObject): Uint8Array | undefined {
  const oneof = { header: 1, formData: 2, query: 3, path: 4 }[String(p['in'])]
  if (oneof === undefined) return undefined
  const shift = oneof === 2 || oneof === 3 ? 1 : 0
  const m = new Message().bool(1, p['required']).string(2, p['in']).string(3, p['description']).string(4, p['name'])
  if (shift) m.bool(5, p['allowEmptyValue'])
  const n = (field: number) => field + shift
  m.string(n(5), p['type'])
    .string(n(6), p['format'])
    .message(n(7), primitivesItems(p['items']))
    .string(n(8), p['collectionFormat'])
    .any(n(9), p['default'])
    .double(n(10), p['maximum'])
    .bool(n(11), p['exclusiveMaximum'])
    .double(n(12), p['minimum'])
    .bool(n(13), p['exclusiveMinimum'])
    .int(n(14), p['maxLength'])
    .int(n(15), p['minLength'])
    .string(n(16), p['pattern'])
    .int(n(17), p['maxItems'])
    .int(n(18), p['minItems'])
    .bool(n(19), p['uniqueItems'])
  for (const e of Array.isArray(p['enum']) ? p['enum'] : []) m.any(n(20), e)
  const sub = m.double(n(21), p['multipleOf']).extensions(n(22), p).finish()
  return new Message().message(oneof, sub).finish()
}

/** ParametersItem: a `$ref` (JsonReference, 2) or a Parameter (1) holding a body (1) or non-body (2) parameter. */
function parametersItem(p: Json): Uint8Array | undefined {
  if (!isObject(p)) return undefined
  if (typeof p['$ref'] === 'string') return new Message().message(2, jsonReference(p)).finish()
  let parameter: Uint8Array | undefined
  if (p['in'] === 'body') {
    const body = new Message()
      .string(1, p['description'])
      .string(2, p['name'])
      .string(3, p['in'])
      .bool(4, p['required'])
      .message(5, schema(p['schema'] ?? null))
      .extensions(6, p)
      .finish()
    parameter = new Message().message(1, body).finish()
  } else {
    const nonBody = nonBodyParameter(p)
    parameter = nonBody && new Message().message(2, nonBody).finish()
  }
  return parameter && new Message().message(1, parameter).finish()
}

function jsonReference(v: JsonObject): Uint8Array {
  return new Message().string(1, v['$ref']).string(2, v['description']).finish()
}

function parameters(v: Json | undefined): Uint8Array[] {
  return (Array.isArray(v) ? v : []).map(parametersItem).filter((b) => b !== undefined)
}

/** ResponseValue: a `$ref` (2) or a Response (1) whose schema is a SchemaItem holding a Schema (1). */
function responseValue(v: Json): Uint8Array | undefined {
  if (!isObject(v)) return undefined
  if (typeof v['$ref'] === 'string') return new Message().message(2, jsonReference(v)).finish()
  const s = v['schema'] === undefined ? undefined : schema(v['schema'])
  const response = new Message()
    .string(1, v['description'])
    .message(2, s && new Message().message(1, s).finish())
    .extensions(5, v)
    .finish()
  return new Message().message(1, response).finish()
}

function operation(v: Json | undefined): Uint8Array | undefined {
  if (!isObject(v)) return undefined
  const responses = isObject(v['responses']) ? v['responses'] : {}
  const codes = Object.fromEntries(Object.entries(responses).filter(([k]) => !k.startsWith('x-')))
  return new Message()
    .strings(1, v['tags'])
    .string(2, v['summary'])
    .string(3, v['description'])
    .message(4, externalDocs(v['externalDocs']))
    .string(5, v['operationId'])
    .strings(6, v['produces'])
    .strings(7, v['consumes'])
    .messages(8, parameters(v['parameters']))
    .message(9, new Message().messages(1, namedMap(codes, responseValue)).extensions(2, responses).finish())
    .strings(10, v['schemes'])
    .bool(11, v['deprecated'])
    .messages(12, securityRequirements(v['security']))
    .extensions(13, v)
    .finish()
}

const METHODS: readonly [string, number][] = [
  ['get', 2],
  ['put', 3],
  ['post', 4],
  ['delete', 5],
  ['options', 6],
  ['head', 7],
  ['patch', 8],
]

function pathItem(v: Json): Uint8Array | undefined {
  if (!isObject(v)) return undefined
  const m = new Message().string(1, v['$ref'])
  for (const [method, field] of METHODS) m.message(field, operation(v[method]))
  return m.messages(9, parameters(v['parameters'])).extensions(10, v).finish()
}

function securityRequirements(v: Json | undefined): Uint8Array[] {
  return (Array.isArray(v) ? v : []).filter(isObject).map((req) =>
    new Message().messages(1, namedMap(req, (scopes) => new Message().strings(1, scopes).finish())).finish(),
  )
}

/** SecurityDefinitionsItem: only the API key kind (2) is served here; basic auth is 1. */
function securityDefinition(v: Json): Uint8Array | undefined {
  if (!isObject(v)) return undefined
  if (v['type'] === 'basic') return new Message().message(1, new Message().string(1, v['type']).string(2, v['description']).extensions(3, v).finish()).finish()
  if (v['type'] !== 'apiKey') return undefined
  const apiKey = new Message().string(1, v['type']).string(2, v['name']).string(3, v['in']).string(4, v['description']).extensions(5, v).finish()
  return new Message().message(2, apiKey).finish()
}

function info(v: Json | undefined): Uint8Array | undefined {
  if (!isObject(v)) return undefined
  return new Message().string(1, v['title']).string(2, v['version']).string(3, v['description']).string(4, v['termsOfService']).extensions(7, v).finish()
}

/**
 * Each path's and definition's encoded entry, by the JSON value it encodes
 * (and its name): the document is rebuilt from the group/versions' parts,
 * which keep their values while their group/version is unchanged, so a
 * custom resource changed encodes its own entries again, not the whole
 * document (some 300 ms with the published Gateway API and cert-manager CRDs).
 */
const encodedEntries = new WeakMap<JsonObject, { name: string; bytes: Uint8Array | undefined }>()

function* namedEntries(obj: JsonObject, encode: (v: Json) => Uint8Array | undefined): Checkpointed<Uint8Array[]> {
  const out: Uint8Array[] = []
  for (const [name, v] of Object.entries(obj)) {
    let entry = isObject(v) ? encodedEntries.get(v) : undefined
    if (entry?.name !== name) {
      // A checkpoint before each entry encoded anew: a custom resource's schema may take tens of milliseconds.
      yield
      const value = encode(v)
      entry = { name, bytes: value && named(name, value) }
      if (isObject(v)) encodedEntries.set(v, entry)
    }
    if (entry.bytes) out.push(entry.bytes)
  }
  return out
}

/** The v2 JSON document as gnostic's `openapi.v2.Document`. */
export function openApiV2Protobuf(doc: JsonObject): Uint8Array {
  return runAtOnce(openApiV2ProtobufInSteps(doc))
}

/** openApiV2Protobuf as checkpointed work: a checkpoint before each path and definition not encoded before. */
export function* openApiV2ProtobufInSteps(doc: JsonObject): Checkpointed<Uint8Array> {
  const paths = isObject(doc['paths']) ? doc['paths'] : {}
  const pathItems = yield* namedEntries(Object.fromEntries(Object.entries(paths).filter(([k]) => !k.startsWith('x-'))), pathItem)
  const definitions = isObject(doc['definitions']) ? yield* namedEntries(doc['definitions'], schema) : []
  return new Message()
    .string(1, doc['swagger'])
    .message(2, info(doc['info']))
    .string(3, doc['host'])
    .string(4, doc['basePath'])
    .strings(5, doc['schemes'])
    .strings(6, doc['consumes'])
    .strings(7, doc['produces'])
    .message(8, new Message().extensions(1, paths).messages(2, pathItems).finish())
    .message(9, new Message().messages(1, definitions).finish())
    .messages(12, securityRequirements(doc['security']))
    .message(13, isObject(doc['securityDefinitions']) ? new Message().messages(1, namedMap(doc['securityDefinitions'], securityDefinition)).finish() : undefined)
    .message(15, externalDocs(doc['externalDocs']))
    .extensions(16, doc)
    .finish()
}
