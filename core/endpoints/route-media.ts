/**
 * The media checks upstream's router makes before a built-in resource's
 * handler runs. Each route of upstream's API installer declares what it
 * consumes (a PATCH route its patch types, every other route anything) and
 * what it produces (JSON, YAML and protobuf; a LIST route the watch streams
 * of those too; pods/log plain text first), and the router (go-restful)
 * refuses a request none of its routes takes: a PATCH of another
 * Content-Type with `415: Unsupported Media Type`, an Accept header that
 * names none of the route's types (nor `*` / `*`) with `406: Not Acceptable`
 * and the types it has. It compares the types as written, case and all,
 * their parameters cut off, so `application/*` is refused where the
 * handler's own negotiation would have taken JSON. Custom resources are
 * served by a handler of their own, without these routes, and are not
 * checked here.
 */
import { APPLY_PATCH_TYPE, JSON_PATCH_TYPE, MERGE_PATCH_TYPE, RESPONSE_TYPES, STRATEGIC_MERGE_PATCH_TYPE, WATCH_STREAM_TYPES } from '../http/media-types.js'
import type { RequestInfo } from '../machinery/request-info.js'
import { StatusError } from '../machinery/status-error.js'
import type { ResourceEntry } from '../resources/catalogue.js'
import { isConnectSubresource } from './connect-options.js'

/** What a PATCH route consumes: every patch type of a built-in kind, strategic merge and apply included. */
const PATCH_ROUTE_TYPES: readonly string[] = [JSON_PATCH_TYPE, MERGE_PATCH_TYPE, STRATEGIC_MERGE_PATCH_TYPE, APPLY_PATCH_TYPE]

/** A LIST route produces the watch streams as well (upstream's MediaTypesForSerializer). */
const LIST_ROUTE_TYPES: readonly string[] = [...RESPONSE_TYPES, ...WATCH_STREAM_TYPES]

/** pods/log produces plain text before the API's own types (its storage's ProducesMIMETypes). */
const LOG_ROUTE_TYPES: readonly string[] = ['text/plain', ...RESPONSE_TYPES]

/** Each media type of a header's comma-separated list, as the router reads it: parameters cut off, spaces trimmed. */
function routerMediaTypes(header: string): string[] {
  return header.split(',').map((part) => {
    const semicolon = part.indexOf(';')
    return (semicolon < 0 ? part : part.slice(0, semicolon)).replace(/^ +| +$/g, '')
  })
}

/** What the route serving this request produces; undefined for routes that produce anything (connect subresources). */
function routeProduces(info: RequestInfo, entry: ResourceEntry): readonly string[] | undefined {
  if (info.subresource) {
    if (isConnectSubresource(entry.resource, info.subresource)) return undefined
    if (entry.group === '' && entry.resource === 'pods' && info.subresource === 'log') return LOG_ROUTE_TYPES
    return RESPONSE_TYPES
  }
  return info.verb === 'list' || info.verb === 'watch' ? LIST_ROUTE_TYPES : RESPONSE_TYPES
}

/**
 * Throws the router's 415 or 406 for a request to a built-in resource's
 * route that does not take its Content-Type or cannot answer in any type
 * its Accept header names. Upstream writes the router's error as a Status
 * through its generic server response (reason from the code, the router's
 * text as the message, empty details).
 */
export function refuseUnroutableMedia(request: Request, info: RequestInfo, entry: ResourceEntry): void {
  if (entry.schema) return
  const produces = routeProduces(info, entry)
  if (!produces) return
  if (request.method === 'PATCH') {
    // An absent Content-Type is read as application/octet-stream for a PATCH, which no PATCH route consumes.
    const contentType = request.headers.get('content-type') || 'application/octet-stream'
    if (!routerMediaTypes(contentType).some((t) => PATCH_ROUTE_TYPES.includes(t))) {
      throw new StatusError(415, 'UnsupportedMediaType', '415: Unsupported Media Type', {})
    }
  }
  const accept = request.headers.get('accept') || '*/*'
  if (!routerMediaTypes(accept).some((t) => t === '*/*' || produces.includes(t))) {
    throw new StatusError(406, 'NotAcceptable', `406: Not Acceptable\n\nAvailable representations: ${produces.join(', ')}`, {})
  }
}
