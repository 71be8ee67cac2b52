/**
 * The time texts the request path makes and checks again and again, kept
 * from one call to the next: the kept answer is the one computing it again
 * gives, within a second and across seconds, and a refusal stays a refusal.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { formatTimestamp } from '../../../core/machinery/object.js'
import { parseTime } from '../../../core/resources/schema/go-values.js'
import { formatTime as formatWireTime, parseTime as parseWireTime } from '../../../core/encoding/protobuf/scalars.js'

describe('formatTimestamp', () => {
  it('formats each second as RFC 3339 in UTC, also after a second formatted just before', () => {
    const at = (ms: number) => formatTimestamp(new Date(ms))
    assert.equal(at(Date.UTC(2026, 10, 25, 19, 0, 0, 10)), '2026-11-25T19:00:00Z')
    assert.equal(at(Date.UTC(2026, 10, 25, 19, 0, 0, 999)), '2026-11-25T19:00:00Z')
    assert.equal(at(Date.UTC(2026, 10, 25, 19, 0, 1, 0)), '2026-11-25T19:00:01Z')
    assert.equal(at(Date.UTC(2026, 10, 25, 19, 0, 0, 500)), '2026-11-25T19:00:00Z')
    assert.equal(at(-1), '1969-12-31T23:59:59Z')
    assert.equal(at(0), '1970-01-01T00:00:00Z')
    assert.throws(() => formatTimestamp(new Date(Number.NaN)), RangeError)
  })
})

describe('parseTime, asked again', () => {
  it('answers a text asked before as it did the first time', () => {
    for (let round = 0; round < 2; round++) {
      assert.deepEqual(parseTime('2026-11-25T20:00:00+01:00', false), { value: '2026-11-25T19:00:00Z' })
      assert.deepEqual(parseTime('2026-11-25T19:00:00.123456Z', true), { value: '2026-11-25T19:00:00.123456Z' })
      assert.match((parseTime('2026-13-25T19:00:00Z', false) as { error: string }).error, /month out of range/)
    }
  })

  it('keeps a bounded number of answers, and none for text longer than a time', () => {
    for (let i = 0; i < 1000; i++) assert.ok('value' in parseTime(`2026-11-25T19:${String(Math.floor(i / 60) % 60).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}Z`, false))
    const long = `2026-11-25T19:00:00Z${' '.repeat(100_000)}`
    assert.match((parseTime(long, false) as { error: string }).error, /extra text/)
    assert.notEqual(parseTime(long, false), parseTime(long, false), 'a long text is parsed anew each time')
  })
})

describe('protobuf times, read and written again', () => {
  it('writes each second and fraction as asked, after another second was written', () => {
    const second = Date.UTC(2026, 10, 25, 19, 0, 0) / 1000
    assert.equal(formatWireTime(second, 0, false), '2026-11-25T19:00:00Z')
    assert.equal(formatWireTime(second, 123456789, true), '2026-11-25T19:00:00.123456Z')
    assert.equal(formatWireTime(second + 1, 0, false), '2026-11-25T19:00:01Z')
    assert.equal(formatWireTime(second, 0, false), '2026-11-25T19:00:00Z')
  })

  it('reads a text read just before as it did, into a tuple of its own, and still refuses a bad one', () => {
    const first = parseWireTime('2026-11-25T20:00:00+01:00', 'creationTimestamp')
    const again = parseWireTime('2026-11-25T20:00:00+01:00', 'creationTimestamp')
    assert.deepEqual(again, first)
    again[0] = 0
    assert.deepEqual(parseWireTime('2026-11-25T20:00:00+01:00', 'creationTimestamp'), first)
    assert.throws(() => parseWireTime('yesterday', 'creationTimestamp'), /not an RFC 3339 time/)
    assert.throws(() => parseWireTime('yesterday', 'creationTimestamp'), /not an RFC 3339 time/)
  })
})
