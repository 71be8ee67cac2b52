import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseGoDuration } from '../../../core/machinery/duration.js'

describe('parseGoDuration (milliseconds)', () => {
  it('reads what time.ParseDuration reads', () => {
    assert.equal(parseGoDuration('1m30s'), 90_000)
    assert.equal(parseGoDuration('1.5s'), 1500)
    assert.equal(parseGoDuration('-300ms'), -300)
    assert.equal(parseGoDuration('0'), 0)
    assert.equal(parseGoDuration('-0'), 0)
    assert.equal(parseGoDuration('2µs'), 0.002)
    assert.equal(parseGoDuration('2μs'), 0.002)
  })

  it('refuses anything else with undefined', () => {
    for (const bad of ['', '5', '5 minutes', '1d', '.s', '-', '1s2']) assert.equal(parseGoDuration(bad), undefined, bad)
  })
})
