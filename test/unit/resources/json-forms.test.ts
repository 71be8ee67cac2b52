/**
 * Types that upstream marshals by hand (JSONSchemaPropsOrArray, ...OrBool,
 * ...OrStringArray) take one of several JSON forms. Every schema shape a
 * published CRD uses must survive the JSON decoder and protobuf both ways
 * unchanged.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { decodeMessageOf, encodeMessageOf } from '../../../core/encoding/protobuf.js'
import { StatusError } from '../../../core/machinery/status-error.js'
import { typeTable } from '../../../core/resources/schema/index.js'
import { decodeAs } from '../../../core/resources/schema/json-decoding.js'

const SCHEMA = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps'
const CRD = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition'

/** A schema with every hand-marshalled form in it, as published CRDs write them. */
function everyForm(): Record<string, unknown> {
  return {
    type: 'object',
    properties: {
      tags: { type: 'array', items: { type: 'string', maxLength: 63 } },
      tuple: { type: 'array', items: [{ type: 'string' }, { type: 'integer' }] },
      labels: { type: 'object', additionalProperties: { type: 'string' } },
      open: { type: 'object', additionalProperties: true },
      closed: { type: 'object', additionalProperties: false },
      pairs: { type: 'array', additionalItems: false },
      extras: { type: 'array', additionalItems: { type: 'string' } },
      nested: { type: 'object', additionalProperties: { type: 'array', items: { type: 'object', additionalProperties: { type: 'integer' } } } },
    },
    dependencies: { a: ['b', 'c'], d: { required: ['e'] } },
    default: { tags: ['x'] },
    enum: [{ a: 1 }, 'b', 2, true, null],
    example: [1, 'two'],
  }
}

function decodeSchema(schema: Record<string, unknown>): { schema: Record<string, unknown>; unknown: string[] } {
  const crd = { spec: { versions: [{ name: 'v1', schema: { openAPIV3Schema: schema } }] } }
  const unknown = decodeAs(crd, typeTable[CRD]!, typeTable, 'CustomResourceDefinition', 'v1')
  return { schema: crd.spec.versions[0]!.schema.openAPIV3Schema, unknown }
}

describe('schemas with several JSON forms', () => {
  it('keeps every form through the JSON decoder and reports no unknown field', () => {
    const { schema, unknown } = decodeSchema(everyForm())
    assert.deepEqual(unknown, [])
    assert.deepEqual(schema, everyForm())
  })

  it('reports unknown fields inside nested item and additionalProperties schemas with their paths', () => {
    const { unknown } = decodeSchema({
      type: 'object',
      properties: { tags: { type: 'array', items: { type: 'string', colour: 'red' } }, m: { additionalProperties: { kind: 'x' } } },
    })
    assert.deepEqual(unknown, [
      'spec.versions[0].schema.openAPIV3Schema.properties.tags.items.colour',
      'spec.versions[0].schema.openAPIV3Schema.properties.m.additionalProperties.kind',
    ])
  })

  it('refuses additionalProperties that is neither a boolean nor a schema with Go\'s words', () => {
    try {
      decodeSchema({ type: 'object', additionalProperties: 'yes' })
      assert.fail('accepted')
    } catch (err) {
      assert.ok(err instanceof StatusError)
      assert.equal(err.code, 400)
      assert.equal(
        err.message,
        'CustomResourceDefinition in version "v1" cannot be handled as a CustomResourceDefinition: boolean or JSON schema expected',
      )
    }
  })

  it('drops items of another JSON kind, and empty item lists, as Go\'s unmarshaller leaves them empty', () => {
    const { schema } = decodeSchema({ type: 'array', items: 'string', properties: { a: { type: 'array', items: [] } } })
    assert.deepEqual(schema, { type: 'array', properties: { a: { type: 'array' } } })
  })

  it('still refuses a wrong type inside a nested schema', () => {
    assert.throws(
      () => decodeSchema({ type: 'array', items: { type: 'string', maxLength: 'long' } }),
      /cannot unmarshal string into Go struct field JSONSchemaProps.*maxLength of type int64/,
    )
  })

  it('round-trips every form through protobuf', () => {
    const def = typeTable[SCHEMA]!
    const { schema } = decodeSchema(everyForm())
    assert.deepEqual(decodeMessageOf(encodeMessageOf(schema, def), def), everyForm())
  })

  it('reads upstream\'s protobuf wrappers: a schema in JSONSchemaPropsOrBool sets allows, false is written out', () => {
    const def = typeTable[SCHEMA]!
    // additionalProperties (30) = {allows (1): true, schema (2): {type (5): "string"}}; additionalItems (33) = {allows: false}
    const bytes = Uint8Array.of(
      ...[0xf2, 0x01, 0x0a, 0x08, 0x01, 0x12, 0x06, 0x2a, 0x04, 0x6c, 0x69, 0x73, 0x74],
      ...[0x8a, 0x02, 0x02, 0x08, 0x00],
    )
    assert.deepEqual(decodeMessageOf(bytes, def), { additionalProperties: { type: 'list' }, additionalItems: false })
    assert.deepEqual([...encodeMessageOf({ additionalProperties: { type: 'list' }, additionalItems: false }, def)], [...bytes])
  })
})
