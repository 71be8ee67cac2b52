/**
 * A protobuf body of megabytes is decoded with checkpoints, as a JSON body
 * is parsed in slices: a ConfigMap of 200,000 keys or a Pod of a million
 * empty containers took a third of a second to a second in one piece. The
 * checkpoints are counted, and the value is the one decoded at once.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { decodeProtobuf, decodeProtobufInSteps } from '../../../core/encoding/protobuf.js'
import { StatusError } from '../../../core/machinery/status-error.js'
import { runCounting } from '../../fixtures/checkpoints.js'
import { lengthDelimited } from '../../helpers/protobuf-wire.js'

function envelope(apiVersion: string, kind: string, raw: Buffer): Uint8Array {
  const typeMeta = Buffer.concat([lengthDelimited(1, Buffer.from(apiVersion)), lengthDelimited(2, Buffer.from(kind))])
  return new Uint8Array(Buffer.concat([Buffer.from('k8s\0', 'latin1'), lengthDelimited(1, typeMeta), lengthDelimited(2, raw)]))
}

/** ObjectMeta with its name (field 1), as field 1 of the object. */
const named = (name: string): Buffer => lengthDelimited(1, lengthDelimited(1, Buffer.from(name)))

describe('a protobuf body of megabytes', () => {
  it('decodes a ConfigMap of 200,000 keys with a checkpoint every few thousand', () => {
    // ConfigMap.data is field 2: one map entry (key 1, value 2) per key.
    const entries = Array.from({ length: 200_000 }, (_, i) => lengthDelimited(2, Buffer.concat([lengthDelimited(1, Buffer.from(`k${i}`)), lengthDelimited(2, Buffer.from('v'))])))
    const body = envelope('v1', 'ConfigMap', Buffer.concat([named('many'), ...entries]))
    const { value, checkpoints } = runCounting(decodeProtobufInSteps(body))
    assert.ok(checkpoints >= 50, `${checkpoints} checkpoints`)
    assert.deepEqual(value, decodeProtobuf(body))
    assert.equal(Object.keys((value as { data: object }).data).length, 200_000)
  })

  it('decodes a Pod of a million empty containers with a checkpoint every few thousand', () => {
    // Pod.spec is field 2, PodSpec.containers field 2: an empty message per container.
    const containers = Buffer.concat(Array<Buffer>(1_000_000).fill(lengthDelimited(2, Buffer.alloc(0))))
    const body = envelope('v1', 'Pod', Buffer.concat([named('wide'), lengthDelimited(2, containers)]))
    const { value, checkpoints } = runCounting(decodeProtobufInSteps(body))
    assert.ok(checkpoints >= 250, `${checkpoints} checkpoints`)
    assert.equal((value as { spec: { containers: unknown[] } }).spec.containers.length, 1_000_000)
  })

  // A Time, a Quantity, a map entry, a nested list's wrapper and the envelope's type metadata are read by loops of
  // their own: a million unknown fields in any of them held the thread a quarter of a second when none counted.
  it('counts the unknown fields of a small message as any other, a million in a Time or in the envelope', () => {
    const junk = Buffer.concat(Array<Buffer>(1_000_000).fill(Buffer.from([0x1a, 0x00])))
    // ObjectMeta.creationTimestamp is field 8: a Time of one second, then the junk.
    const time = lengthDelimited(8, Buffer.concat([Buffer.from([0x08, 0x01]), junk]))
    const inTime = envelope('v1', 'ConfigMap', lengthDelimited(1, Buffer.concat([lengthDelimited(1, Buffer.from('t')), time])))
    const decoded = runCounting(decodeProtobufInSteps(inTime))
    assert.ok(decoded.checkpoints >= 100, `${decoded.checkpoints} checkpoints`)
    assert.equal((decoded.value as { metadata: { creationTimestamp: string } }).metadata.creationTimestamp, '1970-01-01T00:00:01Z')
    const typeMeta = Buffer.concat([lengthDelimited(1, Buffer.from('v1')), lengthDelimited(2, Buffer.from('ConfigMap')), junk])
    const inEnvelope = new Uint8Array(Buffer.concat([Buffer.from('k8s\0', 'latin1'), lengthDelimited(1, typeMeta), lengthDelimited(2, named('e'))]))
    assert.ok(runCounting(decodeProtobufInSteps(inEnvelope)).checkpoints >= 100)
  })

  it('refuses malformed bytes in steps with the words it refuses them at once', () => {
    const lying = new Uint8Array([...envelope('v1', 'ConfigMap', Buffer.alloc(0)).subarray(0, -2), 0x12, 0xff, 0xff, 0xff, 0xff, 0x0f, 1, 2])
    const atOnce = (() => {
      try {
        decodeProtobuf(lying)
      } catch (err) {
        return err
      }
    })()
    assert.ok(atOnce instanceof StatusError && atOnce.code === 400, String(atOnce))
    assert.throws(() => runCounting(decodeProtobufInSteps(lying)), (err: unknown) => err instanceof StatusError && err.message === atOnce.message)
  })
})
