/**
 * The rules of events (upstream's pkg/apis/core/validation/events.go), on
 * the core form that both APIs store. Writes through core/v1 meet only the
 * lax legacy rules, for the old clients that still send such events;
 * writes through events.k8s.io/v1 meet the strict ones as well. Field paths
 * are the core ones whichever API was called, as upstream reports them.
 */
import { sameJson } from '../../machinery/same-json.js'
import { type FieldError, fieldPath, invalid, required } from '../../machinery/field.js'
import { formatValue, type GoField, goStruct, goTime } from '../../machinery/go-format.js'
import { isQualifiedName } from '../../machinery/names.js'
import { at, record, text } from '../columns/values.js'
import type { KubeObject } from '../../machinery/object.js'
import { appendAll } from '../../machinery/append-all.js'

const REPORTING_INSTANCE_MAX = 128
const ACTION_MAX = 128
const REASON_MAX = 128
const NOTE_MAX = 1024

const OBJECT_REFERENCE: readonly GoField[] = [
  ['Kind', 'kind'],
  ['Namespace', 'namespace'],
  ['Name', 'name'],
  ['UID', 'uid'],
  ['APIVersion', 'apiVersion'],
  ['ResourceVersion', 'resourceVersion'],
  ['FieldPath', 'fieldPath'],
]
const EVENT_SOURCE: readonly GoField[] = [
  ['Component', 'component'],
  ['Host', 'host'],
]

function hasTime(v: unknown): boolean {
  return typeof v === 'string' && v !== ''
}

function tooLong(ev: KubeObject, field: string, max: number): FieldError[] {
  return text(ev[field]).length > max ? [invalid(fieldPath(field), '', `can have at most ${max} characters`)] : []
}

/** The reporter's fields a new-style event (one with an eventTime) must carry. */
function validateReporting(ev: KubeObject): FieldError[] {
  const errs: FieldError[] = []
  const controller = text(ev['reportingComponent'])
  // Upstream names the controller `reportingController` on both APIs.
  if (!controller) errs.push(required(fieldPath('reportingController')))
  for (const msg of isQualifiedName(controller)) errs.push(invalid(fieldPath('reportingController'), controller, msg))
  if (!text(ev['reportingInstance'])) errs.push(required(fieldPath('reportingInstance')))
  appendAll(errs, tooLong(ev, 'reportingInstance', REPORTING_INSTANCE_MAX))
  if (!text(ev['action'])) errs.push(required(fieldPath('action')))
  appendAll(errs, tooLong(ev, 'action', ACTION_MAX))
  if (!text(ev['reason'])) errs.push(required(fieldPath('reason')))
  appendAll(errs, tooLong(ev, 'reason', REASON_MAX))
  appendAll(errs, tooLong(ev, 'message', NOTE_MAX))
  return errs
}

/**
 * What every event must satisfy: the object it is about lives in its
 * namespace (old events about cluster objects sit in `default`, new ones
 * also in `kube-system`), and a new-style event names its reporter.
 */
export function validateLegacyEvent(ev: KubeObject): FieldError[] {
  const errs: FieldError[] = []
  const namespace = ev.metadata.namespace ?? ''
  const involved = text(at(ev, 'involvedObject', 'namespace'))
  const mismatch = () => invalid(fieldPath('involvedObject').child('namespace'), involved, 'does not match event.namespace')
  if (!hasTime(ev['eventTime'])) {
    if (involved ? namespace !== involved : namespace !== '' && namespace !== 'default') errs.push(mismatch())
    return errs
  }
  if (!involved && namespace !== 'default' && namespace !== 'kube-system') errs.push(mismatch())
  appendAll(errs, validateReporting(ev))
  return errs
}

function validateSeries(ev: KubeObject): FieldError[] {
  const series = ev['series']
  if (series === undefined || series === null) return []
  const errs: FieldError[] = []
  const count = record(series)['count']
  if (typeof count !== 'number' || count < 2) errs.push(invalid(fieldPath('series.count'), '', 'should be at least 2'))
  if (!hasTime(record(series)['lastObservedTime'])) errs.push(required(fieldPath('series.lastObservedTime')))
  return errs
}

/** A create through events.k8s.io/v1: the legacy rules, then the new API's own. */
export function validateEventV1Create(ev: KubeObject): FieldError[] {
  const errs = validateLegacyEvent(ev)
  appendAll(errs, validateSeries(ev))
  if (!hasTime(ev['eventTime'])) errs.push(required(fieldPath('eventTime')))
  const type = text(ev['type'])
  if (type !== 'Normal' && type !== 'Warning') errs.push(invalid(fieldPath('type'), '', `has invalid value: ${type}`))
  // The deprecated fields are for old clients: the new API leaves them to the server.
  if (hasTime(ev['firstTimestamp'])) errs.push(invalid(fieldPath('firstTimestamp'), '', 'needs to be unset'))
  if (hasTime(ev['lastTimestamp'])) errs.push(invalid(fieldPath('lastTimestamp'), '', 'needs to be unset'))
  if (typeof ev['count'] === 'number' && ev['count'] !== 0) errs.push(invalid(fieldPath('count'), '', 'needs to be unset'))
  if (text(at(ev, 'source', 'component')) || text(at(ev, 'source', 'host'))) errs.push(invalid(fieldPath('source'), '', 'needs to be unset'))
  return errs
}

/** How upstream shows each field it keeps fixed, also the form two values are compared in. */
const IMMUTABLE: readonly [field: string, show: (v: unknown) => unknown][] = [
  ['involvedObject', (v) => goStruct('core.ObjectReference', OBJECT_REFERENCE, v)],
  ['reason', text],
  ['message', text],
  ['source', (v) => goStruct('core.EventSource', EVENT_SOURCE, v)],
  ['firstTimestamp', goTime],
  ['lastTimestamp', goTime],
  ['count', (v) => (typeof v === 'number' ? v : 0)],
  // Upstream checks the reason twice; kept, so that the causes read the same.
  ['reason', text],
  ['type', text],
  ['eventTime', goTime],
  ['action', text],
  ['related', (v) => (v === undefined || v === null ? null : goStruct('core.ObjectReference', OBJECT_REFERENCE, v))],
  ['reportingComponent', text],
  ['reportingInstance', text],
]

/** The path upstream reports a core field under. */
function reportedName(field: string): string {
  return field === 'reportingComponent' ? 'reportingController' : field
}

/** An update through events.k8s.io/v1: a new series is checked; what the event says may not change. */
export function validateEventV1Update(ev: KubeObject, old: KubeObject): FieldError[] {
  const errs = validateLegacyEvent(ev)
  if (!sameJson(ev['series'], old['series'])) appendAll(errs, validateSeries(ev))
  for (const [field, show] of IMMUTABLE) {
    const now = show(ev[field])
    if (formatValue(now) !== formatValue(show(old[field])))
      errs.push(invalid(fieldPath(reportedName(field)), now, 'field is immutable'))
  }
  return errs
}
