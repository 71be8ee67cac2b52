import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseComponentVersions, parseFeatureGates, parseVersion } from '../../../../core/options/flags/versions.js'

describe('version and feature gate flag values', () => {
  it('reads <major>.<minor> versions as upstream does', () => {
    assert.deepEqual(parseVersion('1.31'), { value: { major: 1, minor: 31, patch: 0 } })
    assert.deepEqual(parseVersion('v1.31.2'), { value: { major: 1, minor: 31, patch: 2 } })
    assert.deepEqual(parseVersion('1'), { reason: 'illegal version string "1"' })
    assert.deepEqual(parseVersion('1.31-beta'), { reason: 'illegal version string "1.31-beta"' })
    assert.deepEqual(parseVersion('01.31'), { reason: 'illegal zero-prefixed version component "01" in "01.31"' })
  })

  it('reads --emulated-version entries, defaulting the component to kube', () => {
    assert.deepEqual(parseComponentVersions('1.31', undefined), { value: { kube: { major: 1, minor: 31 } } })
    assert.deepEqual(parseComponentVersions('kube=1.30', undefined), { value: { kube: { major: 1, minor: 30 } } })
    assert.deepEqual(parseComponentVersions('', undefined), { value: {} })
    assert.deepEqual(parseComponentVersions('1.31.1', undefined), { reason: 'patch version not allowed, got: kube=1.31.1' })
    assert.deepEqual(parseComponentVersions('wardle=1.2', undefined), { reason: 'component not registered: wardle' })
    assert.deepEqual(parseComponentVersions('kube=1.30,1.31', undefined), { reason: 'duplicate version flag, kube=1.30 and kube=1.31' })
    assert.deepEqual(parseComponentVersions('1.31', { kube: { major: 1, minor: 30 } }), { reason: 'duplicate version flag, kube=1.30 and kube=1.31' })
    assert.deepEqual(parseComponentVersions('kube=x', undefined), { reason: 'illegal version string "x"' })
  })

  it('reads feature gates with or without the component, adding up over repeats', () => {
    assert.deepEqual(parseFeatureGates('A=true,kube:B=false', undefined), { value: { '': { A: true }, kube: { B: false } } })
    assert.deepEqual(parseFeatureGates('kube:C=1', { kube: { B: false } }), { value: { kube: { B: false, C: true } } })
    assert.deepEqual(parseFeatureGates(' A = true ,,', undefined), { value: { '': { A: true } } })
    assert.deepEqual(parseFeatureGates('', undefined), { value: {} })
  })

  it('refuses malformed feature gates, naming the gate', () => {
    const cases: [string, string][] = [
      ['A', 'missing bool value for A'],
      ['A=maybe', 'invalid value of A=maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax'],
      ['wardle:A=true', 'component not registered: wardle'],
      [':A=true', 'malformed pair, expect string:string'],
    ]
    for (const [input, reason] of cases) assert.deepEqual(parseFeatureGates(input, undefined), { reason }, input)
  })
})
