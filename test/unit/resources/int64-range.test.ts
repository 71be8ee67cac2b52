/**
 * int64 fields take what a Go int64 takes: a JSON number that JSON.parse
 * rounded to 2^63 or beyond, or that is not an integer, is refused with Go's
 * words; values up to ±(2^53 - 1) are kept exactly.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { StatusError } from '../../../core/machinery/status-error.js'
import { typeTable } from '../../../core/resources/schema/index.js'
import { decodeAs } from '../../../core/resources/schema/json-decoding.js'

const POD = typeTable['io.k8s.api.core.v1.Pod']!
const prefix = 'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number '
const field = ' into Go struct field PodSpec.spec.terminationGracePeriodSeconds of type int64'

function grace(value: number): Record<string, unknown> {
  return { spec: { terminationGracePeriodSeconds: value } }
}

function refusal(value: number): string {
  try {
    decodeAs(grace(value), POD, typeTable, 'Pod', 'v1')
  } catch (err) {
    assert.ok(err instanceof StatusError)
    assert.equal(err.code, 400)
    return err.message
  }
  assert.fail(`${value} was accepted`)
}

describe('int64 fields', () => {
  it('refuses numbers an int64 cannot hold, echoed as a client writes them', () => {
    assert.equal(refusal(1e300), `${prefix}1e300${field}`)
    assert.equal(refusal(2 ** 63), `${prefix}9223372036854775808${field}`)
    assert.equal(refusal(-(2 ** 63)), `${prefix}-9223372036854775808${field}`)
    assert.equal(refusal(-1e19), `${prefix}-10000000000000000000${field}`)
    assert.equal(refusal(1.5), `${prefix}1.5${field}`)
  })

  it('keeps the extremes a double holds exactly, and the largest double below 2^63', () => {
    for (const value of [2 ** 53 - 1, -(2 ** 53 - 1), 0, 30, 2 ** 63 - 1024, -(2 ** 63 - 1024)]) {
      const obj = grace(value)
      decodeAs(obj, POD, typeTable, 'Pod', 'v1')
      assert.equal((obj['spec'] as Record<string, unknown>)['terminationGracePeriodSeconds'], value)
    }
  })

  it('keeps int32 fields to int32', () => {
    const obj = { spec: { priority: 2 ** 31 - 1 } }
    decodeAs(obj, POD, typeTable, 'Pod', 'v1')
    assert.equal(obj.spec.priority, 2 ** 31 - 1)
    assert.throws(() => decodeAs({ spec: { priority: -(2 ** 31) - 1 } }, POD, typeTable, 'Pod', 'v1'), /number -2147483649 into Go struct field PodSpec.spec.priority of type int32/)
  })
})
