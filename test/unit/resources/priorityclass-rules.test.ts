/** Priority classes: the value ceiling, the reserved system- names, the default and the fixed fields. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../../core/machinery/object.js'
import {
  applyPriorityClassDefaults,
  validatePriorityClass,
  validatePriorityClassUpdate,
} from '../../../core/resources/scheduling/priority-class-rules.js'
import { errorText } from '../../../core/machinery/field.js'

const pc = (name: string, fields: Record<string, unknown>): KubeObject => ({ metadata: { name }, ...fields })

describe('priority class rules', () => {
  it('defaults the preemption policy to PreemptLowerPriority and keeps Never', () => {
    const plain = pc('a', { value: 1 })
    applyPriorityClassDefaults(plain)
    assert.equal(plain['preemptionPolicy'], 'PreemptLowerPriority')
    const never = pc('b', { value: 1, preemptionPolicy: 'Never' })
    applyPriorityClassDefaults(never)
    assert.equal(never['preemptionPolicy'], 'Never')
  })

  it('allows user classes up to one billion', () => {
    assert.deepEqual(validatePriorityClass(pc('high', { value: 1_000_000_000 })), [])
    assert.deepEqual(validatePriorityClass(pc('higher', { value: 1_000_000_001 })).map(errorText), [
      'value: Forbidden: maximum allowed value of a user defined priority is 1000000000',
    ])
  })

  it('reserves system- names for the system’s own classes, with their values', () => {
    assert.deepEqual(validatePriorityClass(pc('system-cluster-critical', { value: 2_000_000_000 })), [])
    assert.deepEqual(validatePriorityClass(pc('system-node-critical', { value: 2_000_001_000 })), [])
    assert.deepEqual(validatePriorityClass(pc('system-mine', { value: 5 })).map(errorText), [
      "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class",
    ])
    assert.deepEqual(validatePriorityClass(pc('system-node-critical', { value: 5 })).map(errorText), [
      "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: value of system-node-critical PriorityClass must be 2000001000",
    ])
    assert.deepEqual(validatePriorityClass(pc('system-cluster-critical', { value: 2_000_000_000, globalDefault: true })).map(errorText), [
      "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: globalDefault of system-cluster-critical PriorityClass must be false",
    ])
  })

  it('knows two preemption policies', () => {
    assert.deepEqual(validatePriorityClass(pc('a', { value: 1, preemptionPolicy: 'Sometimes' })).map(errorText), [
      'preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"',
    ])
  })

  it('fixes the value and the preemption policy, not the description or globalDefault', () => {
    const old = pc('a', { value: 1, preemptionPolicy: 'PreemptLowerPriority' })
    assert.deepEqual(validatePriorityClassUpdate(pc('a', { value: 1, preemptionPolicy: 'PreemptLowerPriority', description: 'd', globalDefault: true }), old), [])
    assert.deepEqual(validatePriorityClassUpdate(pc('a', { value: 2, preemptionPolicy: 'Never' }), old).map(errorText), [
      'value: Forbidden: may not be changed in an update.',
      'preemptionPolicy: Invalid value: "Never": field is immutable',
    ])
  })
})
