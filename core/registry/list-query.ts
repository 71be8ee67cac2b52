/**
 * The query parameters of list, watch and deletecollection, parsed and
 * checked once (upstream's ListOptions), and turned into the storage
 * predicate that label and field selectors make.
 */
import { badRequest } from '../machinery/status-error.js'
import type { ResourceEntry } from '../resources/catalogue.js'
import type { KubeObject } from '../machinery/object.js'
import { type FieldError, fieldPath, forbiddenField, invalidError, notSupported } from '../machinery/field.js'
import { type FieldSelector, parseFieldSelectorInSlices } from '../machinery/field-selector.js'
import { type LabelSelector, parseLabelSelectorInSlices } from '../machinery/label-selector.js'
import { GoNumError, parseGoInt64 } from '../machinery/go-strconv.js'
import { queryBool } from '../machinery/query-bool.js'

export interface ListQuery {
  labelSelector?: LabelSelector
  fieldSelector?: FieldSelector
  resourceVersion?: string
  resourceVersionMatch?: 'Exact' | 'NotOlderThan'
  limit?: number
  continue?: string
  /** watch only; negative ends the watch at once, as upstream's already expired deadline does */
  timeoutSeconds?: number
  allowWatchBookmarks: boolean
  /**
   * watch only (watch-list, KEP-3157): true starts the watch with the current
   * state as ADDED events and a BOOKMARK marking their end; false starts it
   * with changes only, even from resourceVersion "" or "0".
   */
  sendInitialEvents?: boolean
}

/**
 * An int64 parameter as upstream's query conversion reads it (strconv.ParseInt
 * of the first value, even an empty one), refused with ParseInt's words.
 * A value past 2^53 comes back rounded: as a limit or a timeout it means the
 * same. A negative one is taken, as upstream takes it.
 */
function int64Param(params: URLSearchParams, name: string): number | undefined {
  const raw = params.get(name)
  if (raw === null) return undefined
  try {
    return Number(parseGoInt64(raw))
  } catch (err) {
    if (err instanceof GoNumError) throw badRequest(err.message)
    throw err
  }
}

/**
 * The fields a field selector may name for this resource. Upstream's default
 * conversion accepts metadata.namespace for cluster-scoped kinds too (an
 * empty value matches them all, any other none); kinds converting their own
 * labels accept it only when namespaced.
 */
export function selectableFields(entry: ResourceEntry, obj: KubeObject): Record<string, string> {
  const fields: Record<string, string> = { 'metadata.name': obj.metadata.name ?? '' }
  if (entry.namespaced || !entry.strategy.fieldLabelRefusal) fields['metadata.namespace'] = obj.metadata.namespace ?? ''
  return entry.strategy.fieldSet ? { ...fields, ...entry.strategy.fieldSet(obj) } : fields
}

/** Upstream's words for a field label a kind does not select. */
function fieldLabelRefused(entry: ResourceEntry, label: string): string {
  if (entry.strategy.fieldLabelRefusal) return entry.strategy.fieldLabelRefusal(label)
  return `${JSON.stringify(label)} is not a known field selector: only "metadata.name", "metadata.namespace"`
}

function supportedFieldNames(entry: ResourceEntry): Set<string> {
  const sample: KubeObject = { metadata: {} }
  return new Set(Object.keys(selectableFields(entry, sample)))
}

const MATCH = fieldPath('resourceVersionMatch')
const MATCH_WITH_CONTINUE = 'resourceVersionMatch is forbidden when continue is provided'

/** upstream's ValidateListOptions for a list. */
function listOptionErrors(query: ListQuery, match: string | undefined, cont: string | undefined): FieldError[] {
  const errors: FieldError[] = []
  if (match) {
    if (query.resourceVersion === undefined)
      errors.push(forbiddenField(MATCH, 'resourceVersionMatch is forbidden unless resourceVersion is provided'))
    if (cont) errors.push(forbiddenField(MATCH, MATCH_WITH_CONTINUE))
    if (match !== 'Exact' && match !== 'NotOlderThan') errors.push(notSupported(MATCH, match, ['Exact', 'NotOlderThan', '']))
    if (match === 'Exact' && query.resourceVersion === '0')
      errors.push(forbiddenField(MATCH, 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'))
  }
  if (query.sendInitialEvents !== undefined)
    errors.push(forbiddenField(fieldPath('sendInitialEvents'), 'sendInitialEvents is forbidden for list'))
  return errors
}

/** upstream's validateWatchOptions: resourceVersionMatch belongs to watch-list alone, and only as NotOlderThan. */
function watchOptionErrors(query: ListQuery, match: string | undefined, cont: string | undefined): FieldError[] {
  const errors: FieldError[] = []
  if (query.sendInitialEvents !== undefined && match !== 'NotOlderThan')
    errors.push(forbiddenField(MATCH, 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'))
  if (match) {
    if (query.sendInitialEvents === undefined)
      errors.push(forbiddenField(MATCH, 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'))
    if (match !== 'NotOlderThan') errors.push(notSupported(MATCH, match, ['NotOlderThan']))
    if (cont) errors.push(forbiddenField(MATCH, MATCH_WITH_CONTINUE))
  }
  return errors
}

/**
 * Reads the parameters of a list (also deletecollection) or a watch and
 * refuses contradictory ones as upstream's ValidateListOptions does, every
 * problem in one 422. Selectors are parsed in time slices: one may be as
 * long as a request line (a megabyte), and other requests go on meanwhile.
 */
export async function parseListQuery(params: URLSearchParams, entry: ResourceEntry, verb: 'list' | 'watch' = 'list'): Promise<ListQuery> {
  const query: ListQuery = { allowWatchBookmarks: queryBool(params, 'allowWatchBookmarks') }
  // Upstream converts the numbers of the query before it reads the selectors, timeoutSeconds first.
  const timeoutSeconds = int64Param(params, 'timeoutSeconds')
  const limit = int64Param(params, 'limit')
  const labels = params.get('labelSelector')
  if (labels) query.labelSelector = await parseLabelSelectorInSlices(labels)
  const fields = params.get('fieldSelector')
  if (fields) {
    const selector = await parseFieldSelectorInSlices(fields)
    const known = supportedFieldNames(entry)
    // Upstream names the first in sorted order: only a refusal pays for the sort.
    if ([...selector.fields].some((f) => !known.has(f)))
      for (const r of selector.requirements) {
        if (!known.has(r.field)) throw badRequest(fieldLabelRefused(entry, r.field))
      }
    query.fieldSelector = selector
  }
  const rv = params.get('resourceVersion')
  if (rv !== null && rv !== '') query.resourceVersion = rv
  const match = params.get('resourceVersionMatch') || undefined
  const initial = params.get('sendInitialEvents')
  if (initial !== null && initial !== '') query.sendInitialEvents = queryBool(params, 'sendInitialEvents')
  const cont = params.get('continue') || undefined
  const errors = verb === 'watch' ? watchOptionErrors(query, match, cont) : listOptionErrors(query, match, cont)
  if (errors.length) throw invalidError('meta.k8s.io', 'ListOptions', '', errors)
  if (match) query.resourceVersionMatch = match as 'Exact' | 'NotOlderThan'
  // Zero or less lists everything, as upstream's storage pages only for a positive limit.
  if (limit !== undefined && limit > 0) query.limit = limit
  // A watch has no pages: a continue token means nothing to it.
  if (cont && verb === 'list') {
    if (query.resourceVersion !== undefined && query.resourceVersion !== '0')
      throw invalidError('meta.k8s.io', 'ListOptions', '', [
        forbiddenField(fieldPath('resourceVersion'), 'specifying resource version is not allowed when using continue'),
      ])
    query.continue = cont
  }
  if (timeoutSeconds !== undefined) query.timeoutSeconds = timeoutSeconds
  return query
}

/** The storage predicate for a query's selectors, or undefined when it selects everything. */
export function selectorPredicate(entry: ResourceEntry, query: ListQuery): ((obj: KubeObject) => boolean) | undefined {
  const labels = query.labelSelector?.empty ? undefined : query.labelSelector
  const fields = query.fieldSelector?.empty ? undefined : query.fieldSelector
  if (!labels && !fields) return undefined
  return (obj) =>
    (!labels || labels.matches(obj.metadata.labels)) && (!fields || fields.matches(selectableFields(entry, obj)))
}

