/**
 * Server-side apply and a custom resource's list checks over a list of
 * tens of thousands of keyed items: each pass reads the items' keys between
 * checkpoints, never the whole list at once (200,000 items held the thread
 * most of a second while their identities were read in one piece). The
 * items' keys are read through a counting getter, and the most keys read
 * between two checkpoints is the measure: no clock decides.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { applyShapeOf } from '../../../core/apply/crd-shape.js'
import { mergeValuesInSteps } from '../../../core/apply/merge.js'
import { compareObjectsInSteps, fieldSetOfInSteps } from '../../../core/apply/typed.js'
import { validateObjectInSteps } from '../../../core/crd/validate.js'
import type { JSONSchemaProps } from '../../../core/crd-schema/schema.js'
import { FieldPath } from '../../../core/machinery/field.js'
import type { Checkpointed } from '../../../core/machinery/time-slice.js'

const ITEMS = 40_000

const schema: JSONSchemaProps = {
  type: 'object',
  properties: {
    items: {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
      items: { type: 'object', properties: { name: { type: 'string' }, value: { type: 'string' } } },
    },
  },
}

let keysRead = 0

/** Items whose `name` counts each read. */
function items(value: string): Record<string, unknown>[] {
  return Array.from({ length: ITEMS }, (_, i) => {
    const item: Record<string, unknown> = { value }
    Object.defineProperty(item, 'name', {
      enumerable: true,
      get: () => {
        keysRead++
        return `item-${i}`
      },
    })
    return item
  })
}

/** The most keys read between two checkpoints of `work`, run to its end. */
function mostKeysBetweenCheckpoints(work: Checkpointed<unknown>): number {
  let most = 0
  keysRead = 0
  for (;;) {
    const step = work.next()
    most = Math.max(most, keysRead)
    keysRead = 0
    if (step.done) return most
  }
}

describe('passes over a list of 40,000 keyed items', () => {
  const shape = applyShapeOf(schema)
  const live = { items: items('a') }
  const applied = { items: items('b') }
  // A few thousand items' keys between checkpoints, against all of them (twice over, both sides) before.
  const bound = ITEMS / 4

  it('compares two versions of the list in steps', () => {
    assert.ok(mostKeysBetweenCheckpoints(compareObjectsInSteps(live, applied, shape)) < bound)
  })

  it('gathers the fields the list sets in steps', () => {
    assert.ok(mostKeysBetweenCheckpoints(fieldSetOfInSteps(applied, shape)) < bound)
  })

  it('merges an applied list into the live one in steps', () => {
    assert.ok(mostKeysBetweenCheckpoints(mergeValuesInSteps(live, applied, shape)) < bound)
  })

  it("checks the list's keys are unique in steps", () => {
    assert.ok(mostKeysBetweenCheckpoints(validateObjectInSteps(applied, schema, FieldPath.root(''))) < bound)
  })
})
