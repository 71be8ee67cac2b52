/**
 * Events a controller reports about the objects it acts on (upstream's
 * record.EventRecorder writing core/v1 Events): named after the object and
 * the moment, with the controller as the source. An event that cannot be
 * written is logged and dropped, as upstream's broadcaster drops it: events
 * never hold a reconcile up.
 */
import type { ObjectClient } from '../../client/object-client.js'
import type { Logger } from '../../logging/logger.js'
import { formatTimestamp, type KubeObject } from '../../machinery/object.js'
import { events as eventEntry } from '../../resources/core/events.js'

export type EventType = 'Normal' | 'Warning'

export interface EventRecorder {
  /**
   * Reports `reason` and `message` about `object` (which needs its kind and apiVersion), or about the part of it
   * `fieldPath` names (a kubelet's `spec.containers{name}`).
   */
  record(object: KubeObject, type: EventType, reason: string, message: string, fieldPath?: string): void
}

/** How long an event is counted again rather than recorded anew, and how many are remembered (upstream's correlator). */
const REPEAT_WINDOW_MS = 10 * 60_000
const REMEMBERED_EVENTS = 4096

/**
 * Records as `component`; `host`, the node a kubelet reports from, goes into the event's source and is its
 * reporting instance, as upstream's recorders fill them. An event that repeats one this recorder wrote in the last
 * ten minutes (the same object, part, type, reason and message) is counted on it instead, its count and
 * lastTimestamp patched, as upstream's event correlator does (`kubectl describe` shows "x5 over 3m").
 */
export function clientEventRecorder(client: ObjectClient, component: string, now: () => Date, logger: Logger, host?: string): EventRecorder {
  const recent = new Map<string, { name: string; count: number; at: number }>()
  const dropped = (reason: string) => (err: unknown) => logger.warn({ component, reason, err: String(err) }, 'cannot record an event')
  return {
    record(object, type, reason, message, fieldPath) {
      const at = now()
      const namespace = object.metadata.namespace || 'default'
      const key = [namespace, object.kind, object.metadata.name, object.metadata.uid, fieldPath, type, reason, message].join('\u0000')
      const seen = recent.get(key)
      if (seen && at.getTime() - seen.at < REPEAT_WINDOW_MS) {
        seen.count += 1
        seen.at = at.getTime()
        const patch = { count: seen.count, lastTimestamp: formatTimestamp(at) }
        client.patch(eventEntry, namespace, seen.name, 'merge', patch).catch(dropped(reason))
        return
      }
      const event: KubeObject = {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: `${object.metadata.name}.${(at.getTime() * 1e6 + Math.floor(Math.random() * 1e6)).toString(16)}`, namespace },
        involvedObject: {
          apiVersion: object.apiVersion,
          kind: object.kind,
          namespace: object.metadata.namespace,
          name: object.metadata.name,
          uid: object.metadata.uid,
          resourceVersion: object.metadata.resourceVersion,
          ...(fieldPath ? { fieldPath } : {}),
        },
        reason,
        message,
        type,
        source: { component, ...(host ? { host } : {}) },
        firstTimestamp: formatTimestamp(at),
        lastTimestamp: formatTimestamp(at),
        count: 1,
        reportingComponent: component,
        reportingInstance: host ?? '',
      }
      // The oldest remembered goes first once the map is full (insertion order).
      recent.delete(key)
      if (recent.size >= REMEMBERED_EVENTS) recent.delete(recent.keys().next().value!)
      recent.set(key, { name: event.metadata.name!, count: 1, at: at.getTime() })
      client.create(eventEntry, namespace, event).catch(dropped(reason))
    },
  }
}
