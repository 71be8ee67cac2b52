/**
 * events.k8s.io/v1 Events are core Events under other names (upstream
 * stores both as core v1 in `/registry/events/`): regarding is
 * involvedObject, note is message, deprecatedCount is count, and so on.
 */
import type { LocalVersionConversion } from '../catalogue.js'
import type { KubeObject } from '../../machinery/object.js'

/** events.k8s.io field -> core field; the rest (action, reason, type, eventTime, series, related, reportingInstance) share names. */
const RENAMES: readonly [events: string, core: string][] = [
  ['regarding', 'involvedObject'],
  ['note', 'message'],
  ['reportingController', 'reportingComponent'],
  ['deprecatedSource', 'source'],
  ['deprecatedFirstTimestamp', 'firstTimestamp'],
  ['deprecatedLastTimestamp', 'lastTimestamp'],
  ['deprecatedCount', 'count'],
]

function rename(obj: KubeObject, apiVersion: string, pairs: readonly (readonly [string, string])[]): KubeObject {
  const from = new Map(pairs)
  const out: KubeObject = { apiVersion, kind: obj.kind, metadata: obj.metadata }
  for (const [k, v] of Object.entries(obj)) if (!(k in out)) out[from.get(k) ?? k] = v
  return out
}

export function eventToCore(obj: KubeObject): KubeObject {
  return rename(obj, 'v1', RENAMES)
}

export function eventFromCore(obj: KubeObject): KubeObject {
  return rename(
    obj,
    'events.k8s.io/v1',
    RENAMES.map(([events, core]) => [core, events] as const),
  )
}

export const eventsV1Conversion: LocalVersionConversion = {
  storageVersion: 'v1',
  toStorage: eventToCore,
  fromStorage: eventFromCore,
}
