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

/** The range an empty Accept header stands for. */
const ANY_RANGE: MediaRange = { type: '*', subtype: '*', params: {}, q: 1 }

/** The parameters of a range that has none but q, shared (the callers only read them). */
const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({})

/**
 * One part of an Accept header as goautoneg reads it; undefined for a part
 * that is no `type/subtype` (nor a lone `*`). Read by index, without
 * splitting: a header may hold tens of thousands of parts.
 */
function parseAcceptPart(text: string): MediaRange | undefined {
  const part = text.trim()
  const semicolon = part.indexOf(';')
  const essenceEnd = semicolon < 0 ? part.length : semicolon
  const slash = part.indexOf('/')
  let type: string
  let subtype: string
  if (slash < 0 || slash >= essenceEnd) {
    type = part.slice(0, essenceEnd).trim()
    if (type !== '*') return undefined
    subtype = '*'
  } else {
    const second = part.indexOf('/', slash + 1)
    if (second >= 0 && second < essenceEnd) return undefined
    type = part.slice(0, slash).trim()
    subtype = part.slice(slash + 1, essenceEnd).trim()
  }
  let params: Record<string, string> = NO_PARAMS
  let q = 1
  for (let start = essenceEnd + 1; start <= part.length && semicolon >= 0; ) {
    const next = part.indexOf(';', start)
    const end = next < 0 ? part.length : next
    const eq = part.indexOf('=', start)
    if (eq >= 0 && eq < end) {
      const key = part.slice(start, eq).trim()
      if (key === 'q') q = goQuality(part.slice(eq + 1, end))
      else {
        if (params === NO_PARAMS) params = {}
        params[key] = part.slice(eq + 1, end).trim()
      }
    }
    start = end + 1
  }
  return { type, subtype, params, q }
}

/** How many wildcards a range has, the type's counting double: fewer is tried first at the same q. */
const wildcards = (r: MediaRange): number => (r.type === '*' ? 2 : 0) + (r.subtype === '*' ? 1 : 0)

/**
 * The answer for the first range of an Accept header, in the order
 * upstream's negotiation (goautoneg) tries them, that `decide` has an
 * answer for. That order: by q, highest first, then a range naming its type
 * or subtype before a wildcard one, else as written. As there, names keep
 * their case, a range of q=0 is still tried (last), and a part that is no
 * `type/subtype` (nor a lone `*`) is skipped.
 *
 * Only the first decided range matters, so the header is read once, a part
 * at a time, keeping the best answer so far instead of sorting every range:
 * a header of 60,000 ranges (under a megabyte, which the server accepts)
 * was split, sorted and its ranges all kept, a quarter of a second and
 * 30 MB for a request refused 401. `decide` is called at most once per range,
 * never for one that could not come before the answer already found.
 */
export function firstAccepted<T>(header: string | null | undefined, decide: (range: MediaRange) => T | undefined): T | undefined {
  if (!header?.trim()) return decide(ANY_RANGE)
  let best: { range: MediaRange; answer: T } | undefined
  for (let start = 0; start <= header.length; ) {
    const comma = header.indexOf(',', start)
    const end = comma < 0 ? header.length : comma
    const range = parseAcceptPart(header.slice(start, end))
    start = end + 1
    if (!range || (best && !triedBefore(range, best.range))) continue
    const answer = decide(range)
    if (answer !== undefined) best = { range, answer }
  }
  return best?.answer
}

/** Whether `later`, written after `earlier`, is tried before it. */
const triedBefore = (later: MediaRange, earlier: MediaRange): boolean =>
  later.q > earlier.q || (later.q === earlier.q && wildcards(later) < wildcards(earlier))

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
  const chosen = firstAccepted(accept, (r): OutputFormat | undefined => {
    const as = r.params['as']
    if (as) {
      const isMeta = (r.params['g'] ?? '') === 'meta.k8s.io' && ['v1', 'v1beta1'].includes(r.params['v'] ?? '')
      // The table's includeObject is checked once it is chosen (it may refuse the request).
      if (as === 'Table' && isMeta && opts.allowTable && matches(r, 'application', 'json')) return { kind: 'table', includeObject: 'Metadata' }
      if ((as === 'PartialObjectMetadata' || as === 'PartialObjectMetadataList') && isMeta && matches(r, 'application', 'json')) {
        return { kind: 'partial-metadata', list: as === 'PartialObjectMetadataList', version: r.params['v']! }
      }
      return undefined
    }
    if (matches(r, 'application', 'json')) return { kind: 'json' }
    if (matches(r, 'application', 'yaml') && r.subtype !== '*') return { kind: 'yaml' }
    if (r.type === 'application' && r.subtype === 'vnd.kubernetes.protobuf') protobuf = true
    return undefined
  })
  if (chosen?.kind === 'table') return { kind: 'table', includeObject: tableIncludeObject(opts.includeObject) }
  if (chosen) return chosen
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
  const chosen = firstAccepted(accept, (r) => {
    if (r.params['as']) return undefined
    if (matches(r, 'application', 'json')) return 'json'
    if (matches(r, 'application', 'yaml') && r.subtype !== '*') return 'yaml'
    if (r.type === 'application' && r.subtype === 'vnd.kubernetes.protobuf') protobuf = true
    return undefined
  })
  return chosen ?? (protobuf ? 'protobuf' : 'json')
}

/** True when the Accept header asks for aggregated discovery (apidiscovery.k8s.io v2). */
export function wantsAggregatedDiscovery(accept: string | null | undefined): boolean {
  const wanted = firstAccepted(accept, (r) => {
    const discovery = r.params['as'] === 'APIGroupDiscoveryList' && r.params['g'] === 'apidiscovery.k8s.io' && r.params['v'] === 'v2'
    if (discovery && matches(r, 'application', 'json')) return true
    if (!r.params['as'] && matches(r, 'application', 'json')) return false
    return undefined
  })
  return wanted ?? false
}
