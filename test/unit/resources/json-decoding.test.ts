/**
 * Bodies read as upstream's JSON decoder reads them into a kind's type:
 * the first wrong type refused with Go's words, unknown fields and nulls
 * dropped, times, quantities, durations and base64 checked and stored in
 * upstream's form.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { StatusError } from '../../../core/machinery/status-error.js'
import { typeTable } from '../../../core/resources/schema/index.js'
import { decodeAs } from '../../../core/resources/schema/json-decoding.js'

function decode(typeName: string, kind: string, obj: Record<string, unknown>): Record<string, unknown> {
  decodeAs(obj, typeTable[typeName]!, typeTable, kind, 'v1')
  return obj
}

function refusal(typeName: string, kind: string, obj: Record<string, unknown>): string {
  try {
    decode(typeName, kind, obj)
  } catch (err) {
    assert.ok(err instanceof StatusError)
    assert.equal(err.code, 400)
    return err.message
  }
  assert.fail('the body was accepted')
}

const POD = 'io.k8s.api.core.v1.Pod'
const prefix = 'Pod in version "v1" cannot be handled as a Pod: '

describe('decoding a body as its kind', () => {
  it('names the innermost struct and the path of JSON names, without list indexes', () => {
    assert.equal(
      refusal(POD, 'Pod', { spec: { containers: [{ name: 'a', ports: [{ containerPort: '80' }] }] } }),
      `${prefix}json: cannot unmarshal string into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32`,
    )
    assert.equal(refusal(POD, 'Pod', { spec: 'x' }), `${prefix}json: cannot unmarshal string into Go struct field Pod.spec of type v1.PodSpec`)
    assert.equal(
      refusal(POD, 'Pod', { spec: { nodeSelector: ['a'] } }),
      `${prefix}json: cannot unmarshal array into Go struct field PodSpec.spec.nodeSelector of type map[string]string`,
    )
    assert.equal(
      refusal(POD, 'Pod', { spec: { hostNetwork: 'yes' } }),
      `${prefix}json: cannot unmarshal string into Go struct field PodSpec.spec.hostNetwork of type bool`,
    )
  })

  it('refuses numbers an int32 cannot hold', () => {
    assert.equal(
      refusal(POD, 'Pod', { spec: { priority: 2 ** 31 } }),
      `${prefix}json: cannot unmarshal number 2147483648 into Go struct field PodSpec.spec.priority of type int32`,
    )
  })

  it('checks base64 bytes as Go does', () => {
    assert.equal(
      refusal('io.k8s.api.core.v1.Secret', 'Secret', { data: { k: 'not base64!' } }),
      'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 3',
    )
  })

  it('reads int-or-string values with their own decoder', () => {
    const pdb = 'io.k8s.api.policy.v1.PodDisruptionBudget'
    assert.deepEqual(decode(pdb, 'PodDisruptionBudget', { spec: { minAvailable: '50%' } }), { spec: { minAvailable: '50%' } })
    assert.equal(
      refusal(pdb, 'PodDisruptionBudget', { spec: { maxUnavailable: true } }),
      'PodDisruptionBudget in version "v1" cannot be handled as a PodDisruptionBudget: json: cannot unmarshal bool into Go value of type int32',
    )
  })

  it('stores times in UTC with whole seconds, and micro times with six digits', () => {
    const job = decode('io.k8s.api.batch.v1.Job', 'Job', { status: { startTime: '2024-05-01T14:00:00.5+02:00' } })
    assert.deepEqual(job, { status: { startTime: '2024-05-01T12:00:00Z' } })
    const ev = decode('io.k8s.api.events.v1.Event', 'Event', { eventTime: '2024-05-01T14:00:00.123456+02:00' })
    assert.deepEqual(ev, { eventTime: '2024-05-01T12:00:00.123456Z' })
    assert.equal(
      refusal('io.k8s.api.batch.v1.Job', 'Job', { status: { startTime: '2024-13-01T00:00:00Z' } }),
      'Job in version "v1" cannot be handled as a Job: parsing time "2024-13-01T00:00:00Z": month out of range',
    )
    assert.equal(
      refusal('io.k8s.api.batch.v1.Job', 'Job', { status: { startTime: 5 } }),
      'Job in version "v1" cannot be handled as a Job: json: cannot unmarshal number into Go value of type string',
    )
  })

  it('drops unknown fields and nulls, and turns null list items into zero values', () => {
    const obj = decode(POD, 'Pod', {
      metadata: { name: 'p', labels: null, colour: 'red' },
      spec: { containers: [{ name: 'a', args: ['x', null] }], extra: 1 },
      status: null,
    })
    assert.deepEqual(obj, { metadata: { name: 'p' }, spec: { containers: [{ name: 'a', args: ['x', ''] }] } })
  })

  it('decodes lists in place, as maps: the managed fields a write made here stay the list it knows', () => {
    const managedFields = [{ manager: 'm', operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': {} }, extra: 1 }]
    const containers = [{ name: 'a', args: ['x', null] }]
    const obj = decode(POD, 'Pod', { metadata: { name: 'p', managedFields }, spec: { containers } })
    const meta = obj['metadata'] as { managedFields: unknown }
    assert.equal(meta.managedFields, managedFields)
    assert.equal((obj['spec'] as { containers: unknown }).containers, containers)
    assert.deepEqual(managedFields, [{ manager: 'm', operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': {} } }])
    assert.deepEqual(containers, [{ name: 'a', args: ['x', ''] }])
  })

  it('keeps quantities as written, numbers as their text, and refuses bad ones as ParseQuantity does', () => {
    const quota = 'io.k8s.api.core.v1.ResourceQuota'
    const obj = decode(quota, 'ResourceQuota', { spec: { hard: { cpu: 4, memory: '8Gi' } } })
    assert.deepEqual(obj, { spec: { hard: { cpu: '4', memory: '8Gi' } } })
    const refused = (memory: string) => refusal(quota, 'ResourceQuota', { spec: { hard: { memory } } }).split(': ').slice(1).join(': ')
    assert.equal(refused('8Gm'), "unable to parse quantity's suffix")
    assert.equal(refused('1.2.3'), 'unable to parse numeric part of quantity')
    assert.equal(refused('8GiB'), "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
  })
})
