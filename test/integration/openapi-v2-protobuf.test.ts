/**
 * /openapi/v2 in protobuf, as kubectl asks for it, read back with an
 * independent decoder (protobufjs) and the openapi.v2 messages written down
 * in test/fixtures/openapi-v2/openapiv2.proto, and compared with the JSON form.
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { before, describe, it } from 'node:test'
import protobuf from 'protobufjs'
import { parse as parseYaml } from 'yaml'
import { openApiV2Protobuf, openApiV2ProtobufInSteps } from '../../core/api/openapi-v2-protobuf.js'
import { runCounting } from '../fixtures/checkpoints.js'
import { startServer, type TestClient } from './harness.js'

const root = protobuf.loadSync(join(import.meta.dirname, '..', 'fixtures', 'openapi-v2', 'openapiv2.proto'))
const Document = root.lookupType('openapi.v2.Document')

interface Named<T> {
  name: string
  value: T
}
interface Any {
  yaml?: string
}
interface Schema {
  Ref?: string
  _ref?: string
  description?: string
  type?: { value: string[] }
  format?: string
  required?: string[]
  items?: { schema: Schema[] }
  properties?: { additionalProperties: Named<Schema>[] }
  additionalProperties?: { schema?: Schema; boolean?: boolean }
  enum?: Any[]
  vendorExtension?: Named<Any>[]
}
interface Parameter {
  parameter?: { bodyParameter?: { name: string; in: string; required?: boolean; schema?: Schema }; nonBodyParameter?: Record<string, { name: string; in: string; type: string; uniqueItems?: boolean }> }
}
interface Operation {
  operationId: string
  consumes?: string[]
  produces?: string[]
  parameters?: Parameter[]
  responses: { responseCode: Named<{ response?: { description: string; schema?: { schema?: Schema } } }>[] }
  schemes?: string[]
  vendorExtension?: Named<Any>[]
}
interface DecodedDocument {
  swagger: string
  info: { title: string; version: string }
  paths: { path: Named<Record<string, Operation>>[] }
  definitions: { additionalProperties: Named<Schema>[] }
  securityDefinitions: { additionalProperties: Named<{ apiKeySecurity?: { type: string; name: string; in: string } }>[] }
  security: { additionalProperties: Named<{ value?: string[] }>[] }[]
}

function decode(bytes: Uint8Array): DecodedDocument {
  return Document.toObject(Document.decode(bytes), { defaults: false, arrays: true }) as unknown as DecodedDocument
}

const extension = (ext: Named<Any>[] | undefined, name: string): unknown => {
  const found = ext?.find((e) => e.name === name)
  return found ? parseYaml(found.value.yaml ?? '') : undefined
}

const PROTOBUF_ACCEPTS = ['application/com.github.proto-openapi.spec.v2@v1.0+protobuf', 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf']
const PROTOBUF_TYPE = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf'

async function fetchV2(api: TestClient, accept: string, etag?: string): Promise<Response> {
  const headers: Record<string, string> = { accept }
  if (etag) headers['if-none-match'] = etag
  return api.server.fetch(new Request('http://in-process/openapi/v2', { headers }))
}

describe('/openapi/v2 negotiation', () => {
  it('answers both spellings kubectl sends in protobuf, JSON to JSON, with one ETag that varies by Accept', async () => {
    const api = await startServer()
    const json = await fetchV2(api, 'application/json')
    assert.equal(json.headers.get('content-type'), 'application/json')
    const etag = json.headers.get('etag')!
    assert.match(await json.text(), /^\{"swagger":"2.0",/)
    for (const accept of PROTOBUF_ACCEPTS) {
      const res = await fetchV2(api, accept)
      assert.equal(res.status, 200)
      assert.equal(res.headers.get('content-type'), PROTOBUF_TYPE)
      assert.equal(res.headers.get('etag'), etag)
      assert.equal(res.headers.get('vary'), 'Accept')
      assert.equal(decode(new Uint8Array(await res.arrayBuffer())).swagger, '2.0')
      const again = await fetchV2(api, accept, etag)
      assert.equal(again.status, 304)
    }
  })

  it('prefers what the client ranks first, and JSON for a wildcard', async () => {
    const api = await startServer()
    assert.equal((await fetchV2(api, `${PROTOBUF_ACCEPTS[0]}, application/json`)).headers.get('content-type'), PROTOBUF_TYPE)
    assert.equal((await fetchV2(api, `application/json;q=0.5, ${PROTOBUF_ACCEPTS[1]}`)).headers.get('content-type'), PROTOBUF_TYPE)
    assert.equal((await fetchV2(api, '*/*')).headers.get('content-type'), 'application/json')
  })
})

describe('OpenAPI v2 as gnostic protobuf', () => {
  let doc: Record<string, unknown>
  let decoded: DecodedDocument
  before(async () => {
    const api = await startServer()
    doc = (await api.get('/openapi/v2', { headers: { accept: 'application/json' } })).body as Record<string, unknown>
    decoded = decode(new Uint8Array(await (await fetchV2(api, PROTOBUF_ACCEPTS[0]!)).arrayBuffer()))
  })
  const definition = (name: string) => decoded.definitions.additionalProperties.find((d) => d.name === name)?.value

  it('carries the document header, every path and every definition of the JSON form', () => {
    assert.equal(decoded.swagger, '2.0')
    assert.deepEqual([decoded.info.title, decoded.info.version], ['Kubernetes', 'unversioned'])
    assert.deepEqual(decoded.paths.path.map((p) => p.name), Object.keys(doc['paths'] as object))
    assert.deepEqual(decoded.definitions.additionalProperties.map((d) => d.name), Object.keys(doc['definitions'] as object))
  })

  it("tags kinds with x-kubernetes-group-version-kind, as YAML clients read back", () => {
    const pod = definition('io.k8s.api.core.v1.Pod')!
    assert.deepEqual(extension(pod.vendorExtension, 'x-kubernetes-group-version-kind'), [{ group: '', kind: 'Pod', version: 'v1' }])
    assert.deepEqual(pod.type?.value, ['object'])
    const props = pod.properties!.additionalProperties.map((p) => p.name)
    assert.ok(props.includes('spec') && props.includes('metadata'))
  })

  it('writes references, arrays with items, maps with additionalProperties and list extensions', () => {
    const spec = definition('io.k8s.api.core.v1.PodSpec')!
    const prop = (name: string) => spec.properties!.additionalProperties.find((p) => p.name === name)!.value
    assert.deepEqual(spec.required, ['containers'])
    const containers = prop('containers')
    assert.deepEqual(containers.type?.value, ['array'])
    assert.equal(containers.items?.schema[0]?._ref, '#/definitions/io.k8s.api.core.v1.Container')
    assert.equal(extension(containers.vendorExtension, 'x-kubernetes-patch-merge-key'), 'name')
    const nodeSelector = prop('nodeSelector')
    assert.deepEqual(nodeSelector.additionalProperties?.schema?.type?.value, ['string'])
  })

  it('writes operations with their parameters, responses and the kind they act on', () => {
    const item = decoded.paths.path.find((p) => p.name === '/api/v1/namespaces/{namespace}/pods')!.value
    const post = item['post']!
    assert.equal(post.operationId, 'createCoreV1NamespacedPod')
    assert.deepEqual(post.schemes, ['https'])
    const body = post.parameters!.map((p) => p.parameter?.bodyParameter).find((b) => b !== undefined)!
    assert.equal(body.name, 'body')
    assert.equal(body.schema?._ref, '#/definitions/io.k8s.api.core.v1.Pod')
    const query = post.parameters!.map((p) => p.parameter?.nonBodyParameter?.['queryParameterSubSchema']).filter((q) => q !== undefined)
    assert.ok(query.some((q) => q.name === 'fieldValidation' && q.in === 'query' && q.type === 'string'))
    const created = post.responses.responseCode.find((r) => r.name === '201')!.value.response!
    assert.equal(created.schema?.schema?._ref, '#/definitions/io.k8s.api.core.v1.Pod')
    assert.deepEqual(extension(post.vendorExtension, 'x-kubernetes-group-version-kind'), { group: '', kind: 'Pod', version: 'v1' })
    assert.equal(extension(post.vendorExtension, 'x-kubernetes-action'), 'post')
  })

  it('writes the bearer token security definition and requirement', () => {
    const bearer = decoded.securityDefinitions.additionalProperties.find((d) => d.name === 'BearerToken')!.value
    const { type, name, in: where } = bearer.apiKeySecurity!
    assert.deepEqual({ type, name, in: where }, { type: 'apiKey', name: 'authorization', in: 'header' })
    assert.deepEqual(decoded.security[0]!.additionalProperties.map((r) => [r.name, r.value.value ?? []]), [['BearerToken', []]])
  })

  it('writes additionalProperties: false and enums as gnostic does', () => {
    const bytes = openApiV2Protobuf({
      swagger: '2.0',
      definitions: { x: { type: 'object', additionalProperties: false, properties: { mode: { type: 'string', enum: ['A', 'B'], default: 'A' } } } },
    })
    const x = decode(bytes).definitions.additionalProperties[0]!.value
    assert.equal(x.additionalProperties?.boolean, false)
    const mode = x.properties!.additionalProperties[0]!.value
    assert.deepEqual(mode.enum?.map((e) => parseYaml(e.yaml ?? '')), ['A', 'B'])
  })
})

describe('/openapi/v2 in protobuf after custom resources change', () => {
  it('encodes the paths and definitions not encoded before, a checkpoint before each, and reuses the rest', () => {
    const definitions: Record<string, unknown> = {}
    for (let i = 0; i < 50; i++) definitions[`io.example.v1.Kind${i}`] = { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }
    const paths = { '/apis/example.io/v1/kinds': { get: { operationId: 'listKinds', responses: { '200': { description: 'OK' } } } } }
    const doc = { swagger: '2.0', paths, definitions }
    const first = runCounting(openApiV2ProtobufInSteps(doc as never))
    assert.equal(first.checkpoints, 51)
    // A rebuilt document of the same parts but one changed definition: that one alone is encoded again.
    const changed = { ...doc, definitions: { ...definitions, 'io.example.v1.Kind7': { type: 'object', description: 'changed' } } }
    const second = runCounting(openApiV2ProtobufInSteps(changed as never))
    assert.equal(second.checkpoints, 1)
    assert.deepEqual(decode(second.value), decode(openApiV2Protobuf(structuredClone(changed) as never)))
    assert.equal(decode(second.value).definitions.additionalProperties[7]!.value.description, 'changed')
  })
})
