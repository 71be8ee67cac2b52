/** events.k8s.io/v1: core events under the newer field names, stored once as core events. */
import { fieldLabelNotSupported } from '../field-labels.js'
import type { ResourceEntry } from '../catalogue.js'
import { eventToCore, eventsV1Conversion } from '../conversion/events-v1.js'
import { events as coreEvents } from '../core/events.js'
import { defineResource } from '../define.js'
import { validateEventV1Create, validateEventV1Update } from '../events/event-rules.js'

/** The selectable fields under this version's names: `regarding.*` for `involvedObject.*`, `reportingController`. */
function selectableFields(fields: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(fields)) {
    if (k.startsWith('involvedObject.')) out[`regarding.${k.slice('involvedObject.'.length)}`] = v
    else if (k === 'reportingComponent') out['reportingController'] = v
    else if (k === 'reason' || k === 'type') out[k] = v
  }
  return out
}

export const eventsV1: ResourceEntry = defineResource({
  group: 'events.k8s.io',
  version: 'v1',
  kind: 'Event',
  resource: 'events',
  namespaced: true,
  shortNames: ['ev'],
  storagePath: 'events',
  // Refusals name the core kind, as upstream, which validates the core form.
  invalidKindGroup: '',
  conversion: eventsV1Conversion,
  // The rules run on the core form, the one they are written for.
  strategy: {
    // A PUT of an event not stored creates it (upstream's event strategy, shared by both versions).
    allowCreateOnUpdate: true,
    validate: (ev) => validateEventV1Create(eventToCore(ev)),
    validateUpdate: (ev, old) => validateEventV1Update(eventToCore(ev), eventToCore(old)),
    fieldLabelRefusal: fieldLabelNotSupported,
    fieldSet: (ev) => selectableFields(coreEvents.strategy.fieldSet?.(eventsV1Conversion.toStorage(ev)) ?? {}),
  },
  // Upstream prints both versions with the core printer; so do we, on the core form.
  columns: coreEvents.columns.map((c) => ({ ...c, cell: (obj, now, row) => c.cell(eventsV1Conversion.toStorage(obj), now, row) })),
})
