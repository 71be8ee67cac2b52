import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  alreadyExists,
  conflict,
  notFound,
  OPTIMISTIC_LOCK_MESSAGE,
  requestEntityTooLarge,
  unsupportedMediaType,
} from '../../../core/machinery/status-error.js'
import { fieldPath, invalid, invalidError, MAX_INVALID_TEXT_BYTES, required } from '../../../core/machinery/field.js'

const configmaps = { group: '', resource: 'configmaps' }

describe('Status errors', () => {
  it('words NotFound as upstream, with details naming the object', () => {
    assert.deepEqual(notFound(configmaps, 'cfg').toStatus(), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'configmaps "cfg" not found',
      reason: 'NotFound',
      details: { name: 'cfg', kind: 'configmaps' },
      code: 404,
    })
  })

  it('qualifies resources of named groups', () => {
    const s = alreadyExists({ group: 'apps', resource: 'deployments' }, 'web').toStatus()
    assert.equal(s.message, 'deployments.apps "web" already exists')
    assert.deepEqual(s.details, { name: 'web', kind: 'deployments', group: 'apps' })
    assert.equal(s.code, 409)
  })

  it('words a stale resourceVersion as upstream', () => {
    const s = conflict(configmaps, 'cfg', OPTIMISTIC_LOCK_MESSAGE).toStatus()
    assert.equal(
      s.message,
      'Operation cannot be fulfilled on configmaps "cfg": the object has been modified; please apply your changes to the latest version and try again',
    )
    assert.equal(s.reason, 'Conflict')
  })

  it('builds 422 Invalid with one cause per field error', () => {
    const s = invalidError('', 'ConfigMap', 'Bad', [
      invalid(fieldPath('metadata').child('name'), 'Bad', 'must be lowercase'),
      required(fieldPath('data')),
    ]).toStatus()
    assert.equal(s.code, 422)
    assert.equal(
      s.message,
      'ConfigMap "Bad" is invalid: [metadata.name: Invalid value: "Bad": must be lowercase, data: Required value]',
    )
    assert.deepEqual(s.details?.causes, [
      { reason: 'FieldValueInvalid', message: 'Invalid value: "Bad": must be lowercase', field: 'metadata.name' },
      { reason: 'FieldValueRequired', message: 'Required value', field: 'data' },
    ])
  })

  it('lists field errors up to a megabyte of text and counts the rest', () => {
    // 2,000 errors of 5 kB each (a CRD rule's message on every item of a list): 10 MB of text.
    const detail = 'x'.repeat(5000)
    const errors = Array.from({ length: 2000 }, (_, i) => invalid(fieldPath('spec').child('l').index(i), 0, detail))
    const s = invalidError('ex.com', 'Thing', 'a', errors).toStatus()
    const shown = s.details?.causes?.length ?? 0
    assert.ok(shown > 100 && shown < 2000, `${shown} causes`)
    assert.equal(s.details?.causes?.[shown - 1]?.field, `spec.l[${shown - 1}]`)
    assert.ok((s.message ?? '').endsWith(`, ${2000 - shown} more errors not shown]`), (s.message ?? '').slice(-80))
    assert.ok((s.message ?? '').length < 1.1 * MAX_INVALID_TEXT_BYTES)
    // One error past the bound alone is still shown whole.
    const one = invalidError('ex.com', 'Thing', 'a', [invalid(fieldPath('spec'), 0, 'y'.repeat(2 * MAX_INVALID_TEXT_BYTES))]).toStatus()
    assert.equal(one.details?.causes?.length, 1)
    assert.doesNotMatch(one.message ?? '', /not shown/)
  })

  it('names the limit of a too large body and the accepted media types', () => {
    assert.equal(requestEntityTooLarge(3145728).toStatus().message, 'Request entity too large: limit is 3145728')
    const s = unsupportedMediaType('text/plain', ['application/json']).toStatus()
    assert.equal(s.code, 415)
    assert.match(s.message ?? '', /accepted media types include: application\/json/)
  })
})
