/** A LeaseCandidate's spec, and the order coordinated leader election ranks candidates in. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { compareCandidates } from '../../../core/controllers/coordinated-election.js'
import { validateLeaseCandidate } from '../../../core/resources/coordination/lease-candidate-rules.js'
import { dropCoordinatedFields } from '../../../core/resources/coordination/lease-rules.js'
import { errorText } from '../../../core/machinery/field.js'

const problems = (spec: Record<string, unknown>): string[] =>
  validateLeaseCandidate({ metadata: { name: 'c', namespace: 'kube-system' }, spec }).map(errorText)

describe('lease candidate rules', () => {
  it('accepts a candidate with its lease, versions and strategy', () => {
    assert.deepEqual(problems({ leaseName: 'l', binaryVersion: '1.32.0', emulationVersion: '1.31.0', strategy: 'OldestEmulationVersion' }), [])
  })

  it('wants the lease name, binary version and strategy', () => {
    const text = problems({}).join('\n')
    for (const field of ['spec.leaseName', 'spec.binaryVersion', 'spec.strategy']) assert.match(text, new RegExp(`${field.replace('.', '\\.')}: Required value`))
  })

  it('refuses versions that are not semantic or an emulated version newer than the binary', () => {
    const text = problems({ leaseName: 'l', binaryVersion: '1.32', emulationVersion: '1.33.0', strategy: 'OldestEmulationVersion' }).join('\n')
    assert.match(text, /spec\.binaryVersion: Invalid value: "1\.32": must be a semantic version/)
    assert.match(problems({ leaseName: 'l', binaryVersion: '1.32.0', emulationVersion: '1.33.0', strategy: 'OldestEmulationVersion' }).join('\n'), /must be less than or equal to binaryVersion/)
    assert.match(problems({ leaseName: 'l', binaryVersion: '1.32.0', strategy: 'OldestEmulationVersion' }).join('\n'), /spec\.emulationVersion: Required value/)
    assert.match(problems({ leaseName: 'l', binaryVersion: '1.32.0', strategy: 'Newest' }).join('\n'), /Unsupported value: "Newest"/)
  })

  it('ranks the oldest emulated version first, then the oldest binary, then the longest standing', () => {
    const c = (name: string, emulation: [number, number, number], binary: [number, number, number], created: number) => ({ name, emulation, binary, created })
    assert.ok(compareCandidates(c('a', [1, 31, 0], [1, 32, 0], 5), c('b', [1, 32, 0], [1, 32, 0], 1)) < 0)
    assert.ok(compareCandidates(c('a', [1, 31, 0], [1, 33, 0], 1), c('b', [1, 31, 0], [1, 32, 0], 5)) > 0)
    assert.ok(compareCandidates(c('a', [1, 31, 0], [1, 32, 0], 1), c('b', [1, 31, 0], [1, 32, 0], 5)) < 0)
  })

  it('keeps a lease\'s strategy and preferred holder with coordinated leader election on', () => {
    const lease = { metadata: { name: 'l' }, spec: { strategy: 'OldestEmulationVersion', preferredHolder: 'x' } }
    dropCoordinatedFields(lease, undefined, true)
    assert.deepEqual(lease.spec, { strategy: 'OldestEmulationVersion', preferredHolder: 'x' })
    dropCoordinatedFields(lease)
    assert.deepEqual(lease.spec, {})
  })
})
