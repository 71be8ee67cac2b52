/**
 * Field paths are written out only when an error that is kept shows them:
 * a body of a million invalid list items makes millions of errors, and
 * past MAX_FIELD_ERRORS each is the same placeholder, so neither its path
 * nor its detail need be written (writing them cost most of the time of
 * validating such a body).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { FieldPath, fieldPath, invalid, MAX_FIELD_ERRORS, notSupported, required, withFieldErrorCap } from '../../../core/machinery/field.js'

/** A path that counts how often it is written out. */
function countedPath(): { path: FieldPath; writes: () => number } {
  let writes = 0
  const path = { toString: () => (writes++, 'counted') } as unknown as FieldPath
  return { path, writes: () => writes }
}

describe('field paths', () => {
  it('write as upstream: dots between children, brackets for indexes and keys, none before a first child', () => {
    assert.equal(String(fieldPath('spec').child('ports').index(3).child('name')), 'spec.ports[3].name')
    assert.equal(String(FieldPath.root('').child('metadata').child('labels').key('a/b')), 'metadata.labels[a/b]')
    assert.equal(String(FieldPath.root('').index(0)), '[0]')
  })

  it('are not written for the errors past the bound, which are counted but not kept', () => {
    const { path, writes } = countedPath()
    const errors = withFieldErrorCap(() => {
      const made = []
      for (let i = 0; i < MAX_FIELD_ERRORS; i++) made.push(required(fieldPath('spec').index(i)))
      made.push(required(path), invalid(path, 'x', 'detail'), notSupported(path, 'x', ['a', 'b']))
      return made
    })
    assert.equal(errors.length, MAX_FIELD_ERRORS + 3)
    assert.equal(writes(), 0)
    assert.equal(errors[MAX_FIELD_ERRORS - 1]!.field, `spec[${MAX_FIELD_ERRORS - 1}]`)
  })

  it('are written for an error kept', () => {
    const { path, writes } = countedPath()
    assert.equal(withFieldErrorCap(() => required(path)).field, 'counted')
    assert.equal(writes(), 1)
  })
})
