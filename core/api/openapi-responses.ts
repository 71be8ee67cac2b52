/**
 * The OpenAPI endpoints' answers, negotiated and worded as upstream's
 * kube-openapi handlers and aggregator write them: documents as json.Marshal
 * writes them (no final newline), the v2 document also in protobuf, and a
 * bare status code, without a body, where no document fits (404 for an
 * unknown group/version, 406 for an unknown media type).
 */
import { compareGoStrings } from '../encoding/go-json.js'
import { firstAccepted } from '../http/media-types.js'
import { documentResponse, documentResponseInSlices, sizedResponse } from '../http/respond.js'
import { runInSlices } from '../machinery/time-slice.js'
import type { Catalogue } from '../resources/catalogue.js'
import { type JsonObject, openApiDocument, openApiIndex } from './openapi.js'
import { type AggregatedV2Document, openApiV2Document } from './openapi-v2.js'
import { openApiV2ProtobufInSteps } from './openapi-v2-protobuf.js'

/** The documents of aggregated APIServices (the aggregator's downloads), when there is an aggregator. */
export interface AggregatedOpenApiSource {
  v2(): readonly AggregatedV2Document[]
  v3(): ReadonlyMap<string, { doc: object; hash: string }>
}

/** What /openapi/v2 answers in protobuf, whichever of the two spellings was asked for. */
export const OPENAPI_V2_PROTOBUF_TYPE = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf'

/** The subtypes /openapi/v2 serves, in the order a wildcard picks them. */
const V2_SUBTYPES = ['json', 'com.github.proto-openapi.spec.v2@v1.0+protobuf', 'com.github.proto-openapi.spec.v2.v1.0+protobuf'] as const

function v2Subtype(accept: string | undefined): (typeof V2_SUBTYPES)[number] | undefined {
  return firstAccepted(accept, (clause) => {
    if (clause.type !== 'application' && clause.type !== '*') return undefined
    return V2_SUBTYPES.find((s) => clause.subtype === s || clause.subtype === '*')
  })
}

/**
 * Each document's protobuf form, made in slices (a checkpoint before each
 * path and definition not encoded before) and shared by the requests that
 * ask while it is made: after custom resources were added, the whole form
 * made at once held the thread a third of a second and more.
 */
const protobufForms = new WeakMap<object, Promise<Uint8Array>>()

function protobufOf(doc: JsonObject): Promise<Uint8Array> {
  let bytes = protobufForms.get(doc)
  if (!bytes) {
    bytes = runInSlices(openApiV2ProtobufInSteps(doc as Parameters<typeof openApiV2ProtobufInSteps>[0]))
    protobufForms.set(doc, bytes)
  }
  return bytes
}

/** `/openapi/v2`: JSON or gnostic's protobuf, one ETag for both (the answer varies by Accept). */
export async function openApiV2Response(
  accept: string | undefined,
  ifNoneMatch: string | undefined,
  catalogue: Catalogue,
  aggregated?: AggregatedOpenApiSource,
): Promise<Response> {
  const subtype = v2Subtype(accept)
  if (!subtype) return new Response(null, { status: 406, headers: { vary: 'Accept' } })
  const { doc, etag } = openApiV2Document(catalogue, aggregated?.v2())
  const quoted = `"${etag}"`
  const headers = { etag: quoted, vary: 'Accept' }
  if (ifNoneMatch === quoted) return new Response(null, { status: 304, headers })
  if (subtype === 'json') return documentResponseInSlices(doc, headers)
  return sizedResponse(await protobufOf(doc), { headers: { ...headers, 'content-type': OPENAPI_V2_PROTOBUF_TYPE } })
}

/**
 * The aggregated group/versions' v3 documents the server does not serve
 * itself (a group/version served here keeps its own document), by index key.
 */
function aggregatedV3(catalogue: Catalogue, aggregated: AggregatedOpenApiSource | undefined): ReadonlyMap<string, { doc: object; hash: string }> {
  const docs = aggregated?.v3()
  if (!docs?.size) return new Map()
  const own = openApiIndex(catalogue).paths
  return new Map([...docs].filter(([key]) => !Object.hasOwn(own, key)))
}

/** The v3 index, its paths sorted as Go writes a map; an aggregated group/version's entry carries its extension's hash. */
export function openApiIndexResponse(catalogue: Catalogue, aggregated?: AggregatedOpenApiSource): Response {
  const paths: Record<string, { serverRelativeURL: string }> = { ...openApiIndex(catalogue).paths }
  for (const [key, { hash }] of aggregatedV3(catalogue, aggregated)) paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${hash}` }
  const sorted: Record<string, unknown> = {}
  for (const key of Object.keys(paths).sort(compareGoStrings)) sorted[key] = paths[key]
  return documentResponse({ paths: sorted })
}

/**
 * One group/version's v3 document. A stale `hash` is redirected to the
 * current one; a hashed URL may be cached for good.
 */
export function openApiV3Response(url: URL, catalogue: Catalogue, aggregated?: AggregatedOpenApiSource): Response | Promise<Response> {
  const key = url.pathname.slice('/openapi/v3/'.length)
  const remote = openApiDocument(catalogue, key) ? undefined : aggregatedV3(catalogue, aggregated).get(key)
  const doc = remote?.doc ?? openApiDocument(catalogue, key)
  // Upstream's answer for a group/version it has no document for: 404 and no body.
  if (!doc) return new Response(null, { status: 404 })
  const hash = remote ? remote.hash : (new URL(openApiIndex(catalogue).paths[key]?.serverRelativeURL ?? '', url).searchParams.get('hash') ?? '')
  const current = `/openapi/v3/${key}?hash=${hash}`
  const asked = url.searchParams.get('hash')
  if (asked && asked !== hash) return new Response(null, { status: 301, headers: { location: current } })
  const caching: Record<string, string> = asked
    ? { 'cache-control': 'public, immutable', expires: new Date(Date.now() + 365 * 86_400_000).toUTCString() }
    : { 'cache-control': 'no-cache, private' }
  // An extension server's document may be megabytes: written in slices, as the v2 document is.
  if (remote) return documentResponseInSlices(doc, { ...caching, etag: `"${hash}"` })
  return documentResponse(doc, { ...caching, etag: `"${hash}"` })
}
