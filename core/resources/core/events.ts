/**
 * Core events, the storage form of every event: events.k8s.io/v1 events are
 * the same objects under other field names (groups/events.ts converts).
 */
import { fieldLabelNotSupported } from '../field-labels.js'
import { age } from '../../machinery/human-duration.js'
import type { ResourceEntry } from '../catalogue.js'
import { column, wideColumn } from '../columns/common.js'
import { lowerKindName } from '../columns/format.js'
import { at, int, text } from '../columns/values.js'
import { defineResource } from '../define.js'
import { validateLegacyEvent } from '../events/event-rules.js'
import { pathSegmentName } from '../names.js'
import type { KubeObject } from '../../machinery/object.js'

function firstSeen(ev: KubeObject, now: Date): string {
  return age(text(ev['firstTimestamp']) || text(ev['eventTime']), now)
}

function lastSeen(ev: KubeObject, now: Date): string {
  const series = at(ev, 'series', 'lastObservedTime')
  if (series !== undefined) return age(text(series), now)
  return text(ev['lastTimestamp']) ? age(text(ev['lastTimestamp']), now) : firstSeen(ev, now)
}

function count(ev: KubeObject): number {
  if (at(ev, 'series') !== undefined) return int(at(ev, 'series', 'count'))
  return int(ev['count']) || 1
}

/** `component, host`, from the old source fields or the reporting ones. */
function source(ev: KubeObject): string {
  const component = text(at(ev, 'source', 'component')) || text(ev['reportingComponent'])
  const host = text(at(ev, 'source', 'host')) || text(ev['reportingInstance'])
  return host ? `${component}, ${host}` : component
}

export const events: ResourceEntry = defineResource({
  group: '',
  version: 'v1',
  kind: 'Event',
  resource: 'events',
  namespaced: true,
  shortNames: ['ev'],
  // Upstream checks no metadata of events written through core/v1; a name
  // still has to be a path segment to become a key.
  validateName: pathSegmentName,
  strategy: {
    // A PUT of an event not stored creates it, as upstream's event strategy allows.
    allowCreateOnUpdate: true,
    validate: validateLegacyEvent,
    validateUpdate: validateLegacyEvent,
    fieldLabelRefusal: fieldLabelNotSupported,
    fieldSet: (ev) => ({
      'involvedObject.kind': text(at(ev, 'involvedObject', 'kind')),
      'involvedObject.namespace': text(at(ev, 'involvedObject', 'namespace')),
      'involvedObject.name': text(at(ev, 'involvedObject', 'name')),
      'involvedObject.uid': text(at(ev, 'involvedObject', 'uid')),
      'involvedObject.apiVersion': text(at(ev, 'involvedObject', 'apiVersion')),
      'involvedObject.resourceVersion': text(at(ev, 'involvedObject', 'resourceVersion')),
      'involvedObject.fieldPath': text(at(ev, 'involvedObject', 'fieldPath')),
      reason: text(ev['reason']),
      reportingComponent: text(ev['reportingComponent']),
      // An event written through events.k8s.io has no source; upstream selects it by its reporting controller.
      source: text(at(ev, 'source', 'component')) || text(ev['reportingComponent']),
      type: text(ev['type']),
    }),
  },
  // Events lead with when they were last seen; the name is only a wide column.
  columns: [
    column('Last Seen', 'When the event was last seen.', lastSeen),
    column('Type', 'Normal or Warning.', (ev) => text(ev['type'])),
    column('Reason', 'Why the event happened, in a word.', (ev) => text(ev['reason'])),
    column('Object', 'The object the event is about.', (ev) =>
      lowerKindName(text(at(ev, 'involvedObject', 'kind')), text(at(ev, 'involvedObject', 'name'))),
    ),
    wideColumn('Subobject', 'The part of the object, such as a container.', (ev) => text(at(ev, 'involvedObject', 'fieldPath'))),
    wideColumn('Source', 'The component that reported the event.', source),
    column('Message', 'What happened.', (ev) => text(ev['message']).trim()),
    wideColumn('First Seen', 'When the event was first seen.', firstSeen),
    wideColumn('Count', 'How often the event happened.', count),
    wideColumn('Name', 'The name of the event.', (ev) => ev.metadata.name ?? '', { format: 'name' }),
  ],
})
