/** Events: the lax legacy rules of core/v1 and the strict ones of events.k8s.io/v1, on the core form. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { validateEventV1Create, validateEventV1Update, validateLegacyEvent } from '../../../core/resources/events/event-rules.js'
import type { KubeObject } from '../../../core/machinery/object.js'
import { errorText } from '../../../core/machinery/field.js'

const event = (namespace: string, fields: Record<string, unknown>): KubeObject => ({ metadata: { name: 'e', namespace }, ...fields })

/** A complete new-style event in the core form. */
const newStyle = (fields: Record<string, unknown> = {}) =>
  event('default', {
    involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' },
    eventTime: '2024-05-01T10:00:00.000000Z',
    reportingComponent: 'example.com/c',
    reportingInstance: 'c-1',
    action: 'Start',
    reason: 'Started',
    type: 'Normal',
    ...fields,
  })

describe('legacy event rules', () => {
  it('wants the involved object in the event’s namespace; cluster objects’ events in default', () => {
    assert.deepEqual(validateLegacyEvent(event('a', { involvedObject: { namespace: 'a' } })), [])
    assert.deepEqual(validateLegacyEvent(event('default', { involvedObject: { kind: 'Node', name: 'n' } })), [])
    assert.deepEqual(validateLegacyEvent(event('a', { involvedObject: { namespace: 'b' } })).map(errorText), [
      'involvedObject.namespace: Invalid value: "b": does not match event.namespace',
    ])
    assert.deepEqual(validateLegacyEvent(event('a', { involvedObject: { kind: 'Node' } })).map(errorText), [
      'involvedObject.namespace: Invalid value: "": does not match event.namespace',
    ])
  })

  it('asks nothing else of an old-style event: no type, no reporter', () => {
    assert.deepEqual(validateLegacyEvent(event('a', { involvedObject: { namespace: 'a' }, type: 'Odd' })), [])
  })

  it('wants the reporter of an event with an eventTime, within the length limits', () => {
    const ev = newStyle({ reportingComponent: '', reportingInstance: 'i'.repeat(129), action: '', reason: 'r'.repeat(129), message: 'm'.repeat(1025) })
    assert.deepEqual(validateLegacyEvent(ev).map(errorText), [
      'reportingController: Required value',
      'reportingController: Invalid value: "": name part must be non-empty',
      `reportingController: Invalid value: "": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
      'reportingInstance: Invalid value: "": can have at most 128 characters',
      'action: Required value',
      'reason: Invalid value: "": can have at most 128 characters',
      'message: Invalid value: "": can have at most 1024 characters',
    ])
  })
})

describe('events.k8s.io/v1 event rules', () => {
  it('accepts a complete event', () => {
    assert.deepEqual(validateEventV1Create(newStyle()), [])
  })

  it('wants an eventTime and a known type, and leaves the deprecated fields unset', () => {
    const ev = newStyle({ type: 'Odd', firstTimestamp: '2024-05-01T10:00:00Z', count: 3, source: { component: 'x' } })
    delete ev['eventTime']
    assert.deepEqual(validateEventV1Create(ev).map(errorText), [
      'eventTime: Required value',
      'type: Invalid value: "": has invalid value: Odd',
      'firstTimestamp: Invalid value: "": needs to be unset',
      'count: Invalid value: "": needs to be unset',
      'source: Invalid value: "": needs to be unset',
    ])
  })

  it('wants a series of at least two with a last observed time', () => {
    assert.deepEqual(validateEventV1Create(newStyle({ series: { count: 1 } })).map(errorText), [
      'series.count: Invalid value: "": should be at least 2',
      'series.lastObservedTime: Required value',
    ])
  })

  it('lets an update change the series only, and shows what changed as upstream prints it', () => {
    const old = newStyle()
    assert.deepEqual(validateEventV1Update(newStyle({ series: { count: 2, lastObservedTime: '2024-05-01T10:01:00.000000Z' } }), old), [])
    const changed = newStyle({ involvedObject: { kind: 'Pod', name: 'q', namespace: 'default' }, note: 'x', eventTime: '2024-05-01T10:00:01.500000Z' })
    assert.deepEqual(validateEventV1Update(changed, old).map(errorText), [
      'involvedObject: Invalid value: core.ObjectReference{Kind:"Pod", Namespace:"default", Name:"q", UID:"", APIVersion:"", ResourceVersion:"", FieldPath:""}: field is immutable',
      'eventTime: Invalid value: 2024-05-01 10:00:01.5 +0000 UTC: field is immutable',
    ])
    assert.deepEqual(validateEventV1Update(newStyle({ reason: 'Other' }), old).map(errorText), [
      'reason: Invalid value: "Other": field is immutable',
      'reason: Invalid value: "Other": field is immutable',
    ])
  })
})
