/** A Lease's spec: upstream's rules, and the coordinated fields behind their (off) feature gate. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { dropCoordinatedFields, validateLease } from '../../../core/resources/coordination/lease-rules.js'
import type { KubeObject } from '../../../core/machinery/object.js'
import { errorText } from '../../../core/machinery/field.js'

const lease = (spec: Record<string, unknown>): KubeObject => ({ metadata: { name: 'l', namespace: 'ns' }, spec })
const problems = (spec: Record<string, unknown>) => validateLease(lease(spec)).map(errorText)

describe('lease rules', () => {
  it('accepts a holder with a positive duration', () => {
    assert.deepEqual(problems({ holderIdentity: 'me', leaseDurationSeconds: 15, leaseTransitions: 0 }), [])
  })

  it('refuses a duration that is not positive and negative transitions', () => {
    assert.deepEqual(problems({ leaseDurationSeconds: 0, leaseTransitions: -1 }), [
      'spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0',
      'spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0',
    ])
  })

  it('checks a strategy where upstream reports it, and wants one for a preferred holder', () => {
    assert.deepEqual(problems({ strategy: 'OldestEmulationVersion' }), [])
    assert.deepEqual(problems({ strategy: 'example.com/mine' }), [])
    assert.deepEqual(problems({ strategy: 'Random', preferredHolder: 'a' }), [
      'spec.strategy.strategy: Unsupported value: "Random": supported values: "OldestEmulationVersion"',
    ])
    assert.deepEqual(problems({ preferredHolder: 'a' }), ['spec.preferredHolder: Forbidden: may only be specified if `strategy` is defined'])
  })

  it('drops the coordinated fields of a new lease, and keeps those an old one already had', () => {
    const created = lease({ holderIdentity: 'me', strategy: 'OldestEmulationVersion', preferredHolder: 'a' })
    dropCoordinatedFields(created)
    assert.deepEqual(created['spec'], { holderIdentity: 'me' })
    const updated = lease({ strategy: 'OldestEmulationVersion', preferredHolder: 'b' })
    dropCoordinatedFields(updated, lease({ strategy: 'OldestEmulationVersion' }))
    assert.deepEqual(updated['spec'], { strategy: 'OldestEmulationVersion' })
  })
})
