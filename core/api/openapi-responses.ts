/**
 * The OpenAPI endpoints' answers, negotiated and worded as upstream's
 * kube-openapi handlers and aggregator write them: documents as json.Marshal
 * writes them (no final newline), the v2 document also in protobuf, and a
 * bare status code, without a body, where no document fits (404 for an
 * unknown group/version, 406 for an unknown media type).
 */
import { compareGoStrings } from '../encoding/go-json.js'
import { parseAccept } from '../http/media-types.js'
import { documentResponse } from '../http/respond.js'
import type { Catalogue } from '../resources/catalogue.js'
import { openApiDocument, openApiIndex } from './openapi.js'
import { openApiV2Document } from './openapi-v2.js'

/**
 * `/openapi/v2` as JSON with an ETag; a client that accepts no JSON gets
 * 406 without a body, as kube-openapi answers.
 */
export function openApiV2Response(accept: string | undefined, ifNoneMatch: string | undefined, catalogue: Catalogue): Response {
  const json = parseAccept(accept).some((c) => (c.type === 'application' || c.type === '*') && (c.subtype === 'json' || c.subtype === '*'))
  if (!json) return new Response(null, { status: 406, headers: { vary: 'Accept' } })
  const { doc, etag } = openApiV2Document(catalogue)
  const quoted = `"${etag}"`
  const headers = { etag: quoted, vary: 'Accept' }
  if (ifNoneMatch === quoted) return new Response(null, { status: 304, headers })
  return documentResponse(doc, headers)
}

/** The v3 index, its paths sorted as Go writes a map. */
export function openApiIndexResponse(catalogue: Catalogue): Response {
  const { paths } = openApiIndex(catalogue)
  const sorted: Record<string, unknown> = {}
  for (const key of Object.keys(paths).sort(compareGoStrings)) sorted[key] = paths[key]
  return documentResponse({ paths: sorted })
}

/**
 * One group/version's v3 document. A stale `hash` is redirected to the
 * current one; a hashed URL may be cached for good.
 */
export function openApiV3Response(url: URL, catalogue: Catalogue): Response {
  const key = url.pathname.slice('/openapi/v3/'.length)
  const doc = openApiDocument(catalogue, key)
  // Upstream's answer for a group/version it has no document for: 404 and no body.
  if (!doc) return new Response(null, { status: 404 })
  const current = openApiIndex(catalogue).paths[key]?.serverRelativeURL ?? ''
  const hash = new URL(current, url).searchParams.get('hash') ?? ''
  const asked = url.searchParams.get('hash')
  if (asked && asked !== hash) return new Response(null, { status: 301, headers: { location: current } })
  const caching: Record<string, string> = asked
    ? { 'cache-control': 'public, immutable', expires: new Date(Date.now() + 365 * 86_400_000).toUTCString() }
    : { 'cache-control': 'no-cache, private' }
  return documentResponse(doc, { ...caching, etag: `"${hash}"` })
}
