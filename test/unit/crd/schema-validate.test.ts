import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { JSONSchemaProps } from '../../../core/crd-schema/schema.js'
import { validateObject } from '../../../core/crd/validate.js'
import { errorText, FieldPath } from '../../../core/machinery/field.js'

const schema: JSONSchemaProps = {
  type: 'object',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    spec: {
      type: 'object',
      required: ['name'],
      properties: {
        name: { type: 'string', minLength: 2, maxLength: 5, pattern: '^[a-z]+$' },
        replicas: { type: 'integer', minimum: 1, maximum: 10 },
        ratio: { type: 'number', exclusiveMinimum: true, minimum: 0, exclusiveMaximum: true, maximum: 1, multipleOf: 0.25 },
        size: { type: 'string', enum: ['S', 'M'] },
        enabled: { type: 'boolean' },
        note: { type: 'string', nullable: true },
        port: { 'x-kubernetes-int-or-string': true },
        started: { type: 'string', format: 'date-time' },
        id: { type: 'string', format: 'uuid' },
        address: { type: 'string', format: 'ipv4' },
        tags: { type: 'array', minItems: 1, maxItems: 2, items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, port: { type: 'integer' } } },
        },
        labels: { type: 'object', maxProperties: 2, additionalProperties: { type: 'string' } },
        extra: { type: 'object', minProperties: 1, 'x-kubernetes-preserve-unknown-fields': true },
      },
    },
  },
}

const problems = (spec: Record<string, unknown>): string[] =>
  validateObject({ apiVersion: 'x.io/v1', kind: 'Thing', metadata: { name: 't' }, spec }, schema, FieldPath.root('')).map(errorText)

describe('custom resources against their schema', () => {
  it('accepts a value that satisfies every rule', () => {
    const spec = {
      name: 'abc',
      replicas: 3,
      ratio: 0.5,
      size: 'M',
      enabled: true,
      note: null,
      port: 'http',
      started: '2024-02-29T10:00:00Z',
      id: '123e4567-e89b-12d3-a456-426614174000',
      address: '10.0.0.1',
      tags: ['a', 'b'],
      ports: [{ name: 'a', port: 80 }, { name: 'b', port: 80 }],
      labels: { x: 'y' },
      extra: { anything: [1, { deep: true }] },
    }
    assert.deepEqual(problems(spec), [])
    assert.deepEqual(problems({ name: 'ab', port: 8080 }), [])
  })

  const refused: [string, Record<string, unknown>, string[]][] = [
    ['a missing required field', {}, ['spec.name: Required value']],
    ['a string where an integer belongs', { name: 'ab', replicas: 'string' }, ['spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"']],
    ['a fraction where an integer belongs', { name: 'ab', replicas: 1.5 }, ['spec.replicas: Invalid value: "number": spec.replicas in body must be of type integer: "number"']],
    ['null where null is not allowed', { name: 'ab', enabled: null }, ['spec.enabled: Invalid value: "null": spec.enabled in body must be of type boolean: "null"']],
    ['a value outside the enum', { name: 'ab', size: 'XL' }, ['spec.size: Unsupported value: "XL": supported values: "S", "M"']],
    ['a string too long', { name: 'abcdef' }, ['spec.name: Too long: may not be more than 5 bytes']],
    ['a string too short and off pattern', { name: 'A' }, ["spec.name: Invalid value: \"A\": spec.name in body should be at least 2 chars long", "spec.name: Invalid value: \"A\": spec.name in body should match '^[a-z]+$'"]],
    ['a number above the maximum', { name: 'ab', replicas: 11 }, ['spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10']],
    ['a number below the minimum', { name: 'ab', replicas: 0 }, ['spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1']],
    ['exclusive bounds and multiples', { name: 'ab', ratio: 1 }, ['spec.ratio: Invalid value: 1: spec.ratio in body should be less than 1']],
    ['a number that is not a multiple', { name: 'ab', ratio: 0.3 }, ['spec.ratio: Invalid value: 0.3: spec.ratio in body should be a multiple of 0.25']],
    ['a boolean for an int-or-string', { name: 'ab', port: true }, ['spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"']],
    ['a malformed date-time', { name: 'ab', started: 'yesterday' }, ['spec.started: Invalid value: "yesterday": spec.started in body must be of type date-time: "yesterday"']],
    ['a malformed uuid', { name: 'ab', id: 'nope' }, ['spec.id: Invalid value: "nope": spec.id in body must be of type uuid: "nope"']],
    ['a malformed ipv4', { name: 'ab', address: '10.0.0.256' }, ['spec.address: Invalid value: "10.0.0.256": spec.address in body must be of type ipv4: "10.0.0.256"']],
    ['too few items', { name: 'ab', tags: [] }, ['spec.tags: Invalid value: 0: spec.tags in body should have at least 1 items']],
    ['too many items', { name: 'ab', tags: ['a', 'b', 'c'] }, ['spec.tags: Too many: 3: must have at most 2 items']],
    ['an item of the wrong type', { name: 'ab', tags: [1] }, ['spec.tags[0]: Invalid value: "integer": spec.tags[0] in body must be of type string: "integer"']],
    ['a duplicate in a set', { name: 'ab', tags: ['a', 'a'] }, ['spec.tags[1]: Duplicate value: "a"']],
    ['a duplicate key in a map list', { name: 'ab', ports: [{ name: 'a', port: 1 }, { name: 'a', port: 2 }] }, ['spec.ports[1]: Duplicate value: map[string]interface {}{"name":"a"}']],
    ['a map list item without its key', { name: 'ab', ports: [{ port: 1 }] }, ['spec.ports[0].name: Required value']],
    ['too many properties', { name: 'ab', labels: { a: '1', b: '2', c: '3' } }, ['spec.labels: Too many: 3: must have at most 2 items']],
    ['a map value of the wrong type', { name: 'ab', labels: { a: 1 } }, ['spec.labels.a: Invalid value: "integer": spec.labels.a in body must be of type string: "integer"']],
    ['too few properties', { name: 'ab', extra: {} }, ['spec.extra: Invalid value: 0: spec.extra in body should have at least 1 properties']],
  ]
  for (const [name, spec, expected] of refused) {
    it(`refuses ${name}`, () => assert.deepEqual(problems(spec), expected))
  }

  it('reports every problem of an object, schema causes before list duplicates', () => {
    assert.deepEqual(problems({ tags: ['a', 'a'], replicas: 'x' }), [
      'spec.name: Required value',
      'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
      'spec.tags[1]: Duplicate value: "a"',
    ])
  })

  it('checks the logical junctors', () => {
    const s: JSONSchemaProps = {
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'string' } },
      oneOf: [{ required: ['a'] }, { required: ['b'] }],
      not: { required: ['c'] },
      anyOf: [{ required: ['a'] }, { required: ['b'] }],
    }
    const check = (v: unknown) => validateObject(v, s, FieldPath.root('spec')).map(errorText)
    assert.deepEqual(check({ a: 'x' }), [])
    assert.deepEqual(check({ a: 'x', b: 'y' }), ['spec: Invalid value: "": spec in body must validate one and only one schema (oneOf)'])
    assert.deepEqual(check({}), [
      'spec: Invalid value: "": spec in body must validate at least one schema (anyOf)',
      'spec: Invalid value: "": spec in body must validate one and only one schema (oneOf)',
    ])
    assert.deepEqual(check({ a: 'x', c: 1 }), ['spec: Invalid value: "": spec in body must not validate the schema (not)'])
  })
})

describe('a list of more invalid items than a call takes arguments', () => {
  it('gives an error for each, without overflowing the stack', () => {
    const schema: JSONSchemaProps = {
      type: 'object',
      properties: { a: { type: 'array', items: { type: 'array', items: { type: 'integer' } } }, s: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } } },
    }
    const n = 150_000
    const errs = validateObject({ a: [Array(n).fill('x')], s: Array(n).fill('same') }, schema, FieldPath.root('spec'))
    assert.equal(errs.filter((e) => e.field.startsWith('spec.a[0]')).length, n)
    assert.ok(errs.some((e) => e.field.startsWith('spec.s')))
  })
})

describe('a long enum', () => {
  it('checks many items against 20,000 values, each failure naming them all through one shared text', () => {
    const values = Array.from({ length: 20_000 }, (_, i) => String(i).padStart(40, 'x'))
    const schema: JSONSchemaProps = { type: 'array', items: { type: 'string', enum: values } }
    assert.deepEqual(validateObject(Array(5000).fill(values[19_999]), schema, FieldPath.root('spec')), [])
    const errs = validateObject(['nope', 'nope', values[3]], schema, FieldPath.root('spec'))
    assert.deepEqual(errs.map((e) => e.field), ['spec[0]', 'spec[1]'])
    assert.ok(errs[0]!.detail.startsWith(`supported values: "${values[0]}", "${values[1]}"`))
    assert.equal(errs[0]!.detail, errs[1]!.detail)
  })
})
