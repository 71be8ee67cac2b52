/**
 * Content negotiation: which body encodings a request may carry and which a
 * response may use, chosen from Content-Type and Accept as upstream does.
 */
import { badRequest, notAcceptable } from '../machinery/status-error.js'

export const JSON_TYPE = 'application/json'
export const YAML_TYPE = 'application/yaml'
export const PROTOBUF_TYPE = 'application/vnd.kubernetes.protobuf'
export const MERGE_PATCH_TYPE = 'application/merge-patch+json'
export const JSON_PATCH_TYPE = 'application/json-patch+json'
export const STRATEGIC_MERGE_PATCH_TYPE = 'application/strategic-merge-patch+json'
export const APPLY_PATCH_TYPE = 'application/apply-patch+yaml'

export const AGGREGATED_DISCOVERY_TYPE = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList'

export const BODY_TYPES = [JSON_TYPE, YAML_TYPE, PROTOBUF_TYPE] as const
export const RESPONSE_TYPES = [JSON_TYPE, YAML_TYPE, PROTOBUF_TYPE] as const
/** The media types a watch streams in (YAML has no stream form). */
export const WATCH_STREAM_TYPES = [`${JSON_TYPE};stream=watch`, `${PROTOBUF_TYPE};stream=watch`] as const

export interface MediaRange {
  type: string
  subtype: string
  params: Record<string, string>
  q: number
}

/** Splits `type/subtype;k=v` into its parts, lowercasing names. */
export function parseMediaType(text: string): MediaRange {
  const [essence = '', ...rest] = text.split(';')
  const [type = '', subtype = ''] = essence.trim().toLowerCase().split('/')
  const params: Record<string, string> = {}
  let q = 1
  for (const p of rest) {
    const eq = p.indexOf('=')
    if (eq < 0) continue
    const key = p.slice(0, eq).trim().toLowerCase()
    const value = p
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1')
    if (key === 'q') q = Number(value)
    else params[key] = value
  }
  return { type, subtype, params, q: Number.isFinite(q) ? q : 1 }
}

/** A q value as Go's ParseFloat reads it; anything it refuses counts as 0, as goautoneg leaves it. */
function goQuality(text: string): number {
  return /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text) ? Number(text) : 0
}

/**
 * The media ranges of an Accept header in the order upstream's negotiation
 * (goautoneg) tries them: by q, highest first, then a range naming its type
 * or subtype before a wildcard one, else as written. As there, names keep
 * their case, a range of q=0 is still tried (last), and a part that is no
 * `type/subtype` (nor a lone `*`) is skipped.
 */
export function parseAccept(header: string | null | undefined): MediaRange[] {
  if (!header?.trim()) return [{ type: '*', subtype: '*', params: {}, q: 1 }]
  const ranges: MediaRange[] = []
  for (const part of header.split(',')) {
    const [essence = '', ...rest] = part.trim().split(';')
    const halves = essence.split('/')
    const type = halves[0]!.trim()
    let subtype: string
    if (halves.length === 1 && type === '*') subtype = '*'
    else if (halves.length === 2) subtype = halves[1]!.trim()
    else continue
    const params: Record<string, string> = {}
    let q = 1
    for (const param of rest) {
      const eq = param.indexOf('=')
      if (eq < 0) continue
      const key = param.slice(0, eq).trim()
      if (key === 'q') q = goQuality(param.slice(eq + 1))
      else params[key] = param.slice(eq + 1).trim()
    }
    ranges.push({ type, subtype, params, q })
  }
  const wildcards = (r: MediaRange) => (r.type === '*' ? 2 : 0) + (r.subtype === '*' ? 1 : 0)
  return ranges
    .map((r, i) => ({ r, i }))
    .sort((a, b) => b.r.q - a.r.q || wildcards(a.r) - wildcards(b.r) || a.i - b.i)
    .map(({ r }) => r)
}

export function essence(contentType: string | null | undefined): string {
  if (!contentType) return ''
  const r = parseMediaType(contentType)
  return r.type ? `${r.type}/${r.subtype}` : ''
}

export type OutputFormat =
  | { kind: 'json' }
  | { kind: 'yaml' }
  | { kind: 'protobuf' }
  | { kind: 'table'; includeObject: 'None' | 'Metadata' | 'Object' }
  | { kind: 'partial-metadata'; list: boolean; version: string }

function matches(r: MediaRange, type: string, subtype: string): boolean {
  return (r.type === '*' || r.type === type) && (r.subtype === '*' || r.subtype === subtype)
}

/** A table's `includeObject`, refused as upstream's table options are when it is none of its values. */
function tableIncludeObject(value: string | null | undefined): 'None' | 'Metadata' | 'Object' {
  if (value === 'None' || value === 'Object' || value === 'Metadata') return value
  if (!value) return 'Metadata'
  throw badRequest(`Unable to convert to Table as requested: includeObject: Invalid value: ${JSON.stringify(value)}: must be 'Metadata', 'Object', 'None', or empty`)
}

/**
 * Picks the response format for an API object. `as=Table` (meta.k8s.io v1
 * or v1beta1) is honoured where `allowTable`, `as=PartialObjectMetadata` and
 * `as=PartialObjectMetadataList` (the same versions, in JSON) for every
 * verb; ranges naming another `as=` are skipped, as upstream skips
 * conversions it does not offer.
 */
export function negotiateOutput(
  accept: string | null | undefined,
  opts: { allowTable: boolean; includeObject?: string | null },
): OutputFormat {
  // Protobuf is answered only to clients that accept nothing else: JSON is what every client reads.
  let protobuf = false
  for (const r of parseAccept(accept)) {
    const as = r.params['as']
    if (as) {
      const isMeta = (r.params['g'] ?? '') === 'meta.k8s.io' && ['v1', 'v1beta1'].includes(r.params['v'] ?? '')
      if (as === 'Table' && isMeta && opts.allowTable && matches(r, 'application', 'json')) {
        return { kind: 'table', includeObject: tableIncludeObject(opts.includeObject) }
      }
      if ((as === 'PartialObjectMetadata' || as === 'PartialObjectMetadataList') && isMeta && matches(r, 'application', 'json')) {
        return { kind: 'partial-metadata', list: as === 'PartialObjectMetadataList', version: r.params['v']! }
      }
      continue
    }
    if (matches(r, 'application', 'json')) return { kind: 'json' }
    if (matches(r, 'application', 'yaml') && r.subtype !== '*') return { kind: 'yaml' }
    if (r.type === 'application' && r.subtype === 'vnd.kubernetes.protobuf') protobuf = true
  }
  if (protobuf) return { kind: 'protobuf' }
  throw notAcceptable(RESPONSE_TYPES)
}

/**
 * The encoding of an error's Status: negotiated as an object's answer is,
 * but ranges that ask for a conversion (`as=`) are passed over, and what
 * nothing acceptable matches is JSON, never a 406 in place of the error
 * (upstream's ErrorNegotiated). Protobuf, as for objects, only for a client
 * that accepts nothing else.
 */
export function negotiateErrorEncoding(accept: string | null | undefined): 'json' | 'yaml' | 'protobuf' {
  let protobuf = false
  for (const r of parseAccept(accept)) {
    if (r.params['as']) continue
    if (matches(r, 'application', 'json')) return 'json'
    if (matches(r, 'application', 'yaml') && r.subtype !== '*') return 'yaml'
    if (r.type === 'application' && r.subtype === 'vnd.kubernetes.protobuf') protobuf = true
  }
  return protobuf ? 'protobuf' : 'json'
}

/** True when the Accept header asks for aggregated discovery (apidiscovery.k8s.io v2). */
export function wantsAggregatedDiscovery(accept: string | null | undefined): boolean {
  for (const r of parseAccept(accept)) {
    if (
      r.params['as'] === 'APIGroupDiscoveryList' &&
      r.params['g'] === 'apidiscovery.k8s.io' &&
      r.params['v'] === 'v2' &&
      matches(r, 'application', 'json')
    )
      return true
    if (!r.params['as'] && matches(r, 'application', 'json')) return false
  }
  return false
}
