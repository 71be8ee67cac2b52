/**
 * Timestamps of every year from 0001 to 9999 come back exactly as written
 * through each codec the server speaks: JSON (read into the kind's type),
 * YAML (written as upstream's serializer writes it, read back as a body)
 * and protobuf, at second (Time) and microsecond (MicroTime) precision.
 * JavaScript's Date reads years 0-99 as 1900-1999, which once turned an
 * early Lease's `acquireTime` into a time in 1901.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { apiObjectYaml } from '../../../core/encoding/go-yaml.js'
import { decodeProtobuf, encodeProtobuf } from '../../../core/encoding/protobuf.js'
import { decodeBody } from '../../../core/http/body.js'
import { civilFromDays, daysFromCivil, utcSecondText } from '../../../core/machinery/civil-time.js'
import { StatusError } from '../../../core/machinery/status-error.js'
import { typeTable } from '../../../core/resources/schema/index.js'
import { decodeAs } from '../../../core/resources/schema/json-decoding.js'
import { codecFor, STORAGE_MEDIA_TYPES } from '../../../core/storage/codec.js'
import type { KubeObject } from '../../../core/machinery/object.js'

const pad = (n: number, width = 2): string => String(n).padStart(width, '0')

/** A UTC time of years 0001-9999 (Go's zero instant itself left out: upstream writes it as null). */
const civilTime = fc
  .record({
    year: fc.integer({ min: 1, max: 9999 }),
    month: fc.integer({ min: 1, max: 12 }),
    day: fc.integer({ min: 1, max: 28 }),
    hour: fc.integer({ min: 0, max: 23 }),
    minute: fc.integer({ min: 0, max: 59 }),
    second: fc.integer({ min: 0, max: 59 }),
    micros: fc.integer({ min: 0, max: 999_999 }),
  })
  .filter((t) => !(t.year === 1 && t.month === 1 && t.day === 1 && t.hour === 0 && t.minute === 0 && t.second === 0))

type Civil = typeof civilTime extends fc.Arbitrary<infer T> ? T : never

const timeText = (t: Civil): string => `${pad(t.year, 4)}-${pad(t.month)}-${pad(t.day)}T${pad(t.hour)}:${pad(t.minute)}:${pad(t.second)}Z`
const microText = (t: Civil): string => `${timeText(t).slice(0, -1)}.${pad(t.micros, 6)}Z`

/** A Lease with both MicroTimes and a Time in its metadata, as a client writes it. */
function lease(t: Civil): Record<string, unknown> {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'l', namespace: 'default', creationTimestamp: timeText(t) },
    spec: { holderIdentity: 'h', acquireTime: microText(t), renewTime: microText(t), leaseDurationSeconds: 30 },
  }
}

function decodeLease(obj: Record<string, unknown>): Record<string, unknown> {
  decodeAs(obj, typeTable['io.k8s.api.coordination.v1.Lease']!, typeTable, 'Lease', 'v1')
  return obj
}

function refusal(obj: Record<string, unknown>): string {
  try {
    decodeLease(obj)
  } catch (err) {
    assert.ok(err instanceof StatusError)
    return err.message
  }
  assert.fail('the body was accepted')
}

const withAcquireTime = (text: string): Record<string, unknown> => ({ spec: { acquireTime: text } })
const withCreated = (text: string): Record<string, unknown> => ({ metadata: { creationTimestamp: text } })

describe('timestamps of every year', () => {
  it('keep their text through JSON decoding, in seconds and in microseconds', () => {
    fc.assert(
      fc.property(civilTime, (t) => {
        assert.deepEqual(decodeLease(lease(t)), lease(t))
      }),
      { numRuns: 2000 },
    )
  })

  it('keep their text through YAML written as upstream writes it and read back', async () => {
    await fc.assert(
      fc.asyncProperty(civilTime, async (t) => {
        const yaml = apiObjectYaml(lease(t))
        assert.match(yaml, new RegExp(`acquireTime: "${microText(t).replaceAll('.', '\\.')}"`))
        assert.deepEqual(await decodeBody('application/yaml', new TextEncoder().encode(yaml)), lease(t))
      }),
      { numRuns: 500 },
    )
  })

  it('keep their text through protobuf', () => {
    fc.assert(
      fc.property(civilTime, (t) => {
        assert.deepEqual(decodeProtobuf(encodeProtobuf(lease(t))), lease(t))
      }),
      { numRuns: 2000 },
    )
  })

  it('keep their text through every storage media type', () => {
    for (const mediaType of STORAGE_MEDIA_TYPES) {
      const codec = codecFor(mediaType)
      fc.assert(
        fc.property(civilTime, (t) => {
          assert.deepEqual(codec.decode(codec.encode(lease(t) as KubeObject)), lease(t), mediaType)
        }),
        { numRuns: 300 },
      )
    }
  })

  it('round-trip the conformance spec\'s early MicroTimes and the Unix epoch through protobuf', () => {
    const early = { ...lease({ year: 1, month: 1, day: 1, hour: 0, minute: 0, second: 2, micros: 0 }) }
    assert.equal((early['spec'] as Record<string, unknown>)['acquireTime'], '0001-01-01T00:00:02.000000Z')
    assert.deepEqual(decodeProtobuf(encodeProtobuf(early)), early)
    const epoch = lease({ year: 1970, month: 1, day: 1, hour: 0, minute: 0, second: 0, micros: 0 })
    assert.deepEqual(decodeProtobuf(encodeProtobuf(epoch)), epoch)
  })

  it('reads Go\'s zero time from protobuf as no time at all, as upstream answers null', () => {
    const zero = lease({ year: 1, month: 1, day: 1, hour: 0, minute: 0, second: 0, micros: 0 })
    const back = decodeProtobuf(encodeProtobuf(zero)) as Record<string, Record<string, unknown>>
    assert.equal(back['spec']!['acquireTime'], undefined)
    assert.equal(back['metadata']!['creationTimestamp'], undefined)
  })

  it('agrees with the calendar on every day of years 1 to 9999', () => {
    const first = daysFromCivil(1, 1, 1)
    const last = daysFromCivil(9999, 12, 31)
    assert.equal(last - first + 1, 3_652_059)
    fc.assert(
      fc.property(fc.integer({ min: first, max: last }), (days) => {
        const { year, month, day } = civilFromDays(days)
        assert.equal(daysFromCivil(year, month, day), days)
        if (year >= 100) assert.equal(utcSecondText(days * 86_400), new Date(days * 86_400_000).toISOString().slice(0, 19))
      }),
    )
  })
})

describe('times in other zones and with fractions', () => {
  it('leaves out Go\'s zero time, in any zone, as upstream answers it null', () => {
    assert.deepEqual(decodeLease(withAcquireTime('0001-01-01T00:00:00.000000Z')), { spec: {} })
    assert.deepEqual(decodeLease(withAcquireTime('0001-01-01T01:00:00.000000+01:00')), { spec: {} })
    assert.deepEqual(decodeLease(withCreated('0001-01-01T00:00:00.5Z')), { metadata: {} })
    assert.deepEqual(decodeLease(withAcquireTime('0001-01-01T00:00:00.000001Z')), withAcquireTime('0001-01-01T00:00:00.000001Z'))
  })


  it('stores a Time in UTC and drops its fraction, as metav1.Time marshals it', () => {
    const obj = decodeLease(withCreated('0001-01-01T01:30:02.999+01:30'))
    assert.deepEqual(obj, withCreated('0001-01-01T00:00:02Z'))
    assert.deepEqual(decodeLease(withCreated('2024-03-01T00:59:59.9-01:00')), withCreated('2024-03-01T01:59:59Z'))
  })

  it('keeps a MicroTime\'s microseconds when it moves to UTC, across a day and a leap day', () => {
    assert.deepEqual(decodeLease(withAcquireTime('2024-03-01T01:00:00.123456+02:00')), withAcquireTime('2024-02-29T23:00:00.123456Z'))
    assert.deepEqual(decodeLease(withAcquireTime('0099-12-31T23:30:00.000001-01:00')), withAcquireTime('0100-01-01T00:30:00.000001Z'))
  })

  it('refuses a MicroTime without exactly six fraction digits, as Go parses RFC3339Micro', () => {
    const prefix = 'Lease in version "v1" cannot be handled as a Lease: '
    assert.equal(
      refusal(withAcquireTime('2024-05-01T12:00:00Z')),
      `${prefix}parsing time "2024-05-01T12:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"`,
    )
    assert.equal(
      refusal(withAcquireTime('2024-05-01T12:00:00.123Z')),
      `${prefix}parsing time "2024-05-01T12:00:00.123Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse ".123Z" as ".000000"`,
    )
    assert.equal(
      refusal(withAcquireTime('2024-05-01T12:00:00.1234567Z')),
      `${prefix}parsing time "2024-05-01T12:00:00.1234567Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "7Z" as "Z07:00"`,
    )
  })

  it('refuses days a month does not have, and zone offsets past 24 hours', () => {
    const prefix = 'Lease in version "v1" cannot be handled as a Lease: '
    assert.equal(refusal(withCreated('2023-02-29T00:00:00Z')), `${prefix}parsing time "2023-02-29T00:00:00Z": day out of range`)
    assert.equal(refusal(withCreated('2024-04-31T00:00:00Z')), `${prefix}parsing time "2024-04-31T00:00:00Z": day out of range`)
    assert.deepEqual(decodeLease(withCreated('2024-02-29T00:00:00Z')), withCreated('2024-02-29T00:00:00Z'))
    assert.equal(
      refusal(withCreated('2024-01-01T00:00:00+25:00')),
      `${prefix}parsing time "2024-01-01T00:00:00+25:00": time zone offset hour out of range`,
    )
  })
})
