import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { JSONSchemaProps } from '../../../core/crd-schema/schema.js'
import { validateStructuralSchema } from '../../../core/crd-schema/structural.js'
import { errorText, fieldPath } from '../../../core/machinery/field.js'

const root = fieldPath('spec').child('versions').index(0).child('schema').child('openAPIV3Schema')
const P = 'spec.versions[0].schema.openAPIV3Schema'

const problems = (schema: JSONSchemaProps): string[] => validateStructuralSchema(schema, root).map(errorText)

const obj = (properties: Record<string, JSONSchemaProps>, extra: JSONSchemaProps = {}): JSONSchemaProps => ({
  type: 'object',
  properties,
  ...extra,
})

describe('structural schemas: what upstream accepts', () => {
  const accepted: [string, JSONSchemaProps][] = [
    ['a typed tree', obj({ spec: obj({ replicas: { type: 'integer', minimum: 0 }, tags: { type: 'array', items: { type: 'string' } } }) })],
    ['the int-or-string anyOf shape', obj({ port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] } })],
    ['the int-or-string allOf shape', obj({ port: { 'x-kubernetes-int-or-string': true, allOf: [{ anyOf: [{ type: 'integer' }, { type: 'string' }] }, { pattern: '^\\d+$' }] } })],
    ['an untyped field that preserves unknown fields', obj({ raw: { 'x-kubernetes-preserve-unknown-fields': true } })],
    ['metadata restricting name and generateName', obj({ metadata: obj({ name: { type: 'string', maxLength: 10 }, generateName: { type: 'string' } }) })],
    ['an embedded resource', obj({ template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true } })],
    ['value validation naming specified fields', obj({ a: { type: 'string' }, b: { type: 'string' } }, { oneOf: [{ required: ['a'] }, { required: ['b'] }] })],
    ['a map list with required keys', obj({ ports: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'], items: obj({ name: { type: 'string' } }, { required: ['name'] }) } })],
    ['a map list with defaulted keys', obj({ ports: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['proto'], items: obj({ proto: { type: 'string', default: 'TCP' } }) } })],
  ]
  for (const [name, schema] of accepted) {
    it(`accepts ${name}`, () => assert.deepEqual(problems(schema), []))
  }
})

describe('structural schemas: what upstream refuses, with its causes', () => {
  const refused: [string, JSONSchemaProps, string[]][] = [
    ['a field without a type', obj({ spec: obj({ size: {} }) }), [`${P}.properties[spec].properties[size].type: Required value: must not be empty for specified object fields`]],
    ['items without a type', obj({ list: { type: 'array', items: {} } }), [`${P}.properties[list].items.type: Required value: must not be empty for specified array items`]],
    ['an empty root type', { properties: { a: { type: 'string' } } }, [`${P}.type: Required value: must not be empty at the root`]],
    ['a root that is not an object', { type: 'string' }, [`${P}.type: Invalid value: "string": must be object at the root`]],
    ['an array without items', obj({ list: { type: 'array' } }), [`${P}.properties[list].items: Required value: must be specified`]],
    ['additionalProperties at the root', { type: 'object', additionalProperties: { type: 'string' } }, [`${P}.additionalProperties: Forbidden: must not be used at the root`]],
    [
      'a type inside anyOf',
      obj({ a: { type: 'string', anyOf: [{ type: 'string' }] } }),
      [`${P}.properties[a].anyOf[0].type: Forbidden: must be empty to be structural`],
    ],
    [
      'a junctor naming a field the structure lacks',
      obj({ a: { type: 'string' } }, { anyOf: [{ properties: { b: { minLength: 1 } } }] }),
      [`${P}.properties[b]: Required value: because it is defined in ${P}.anyOf[0].properties[b]`],
    ],
    [
      'int-or-string with preserve-unknown-fields',
      obj({ port: { 'x-kubernetes-int-or-string': true, 'x-kubernetes-preserve-unknown-fields': true } }),
      [`${P}.properties[port].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true`],
    ],
    [
      'an embedded resource that is not an object',
      obj({ t: { type: 'string', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true } }),
      [`${P}.properties[t].type: Invalid value: "string": must be object if x-kubernetes-embedded-resource is true`],
    ],
    [
      'an embedded resource without properties or preserve-unknown-fields',
      obj({ t: { type: 'object', 'x-kubernetes-embedded-resource': true } }),
      [`${P}.properties[t].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields`],
    ],
    [
      'metadata restricting labels',
      obj({ metadata: obj({ labels: { type: 'object', additionalProperties: { type: 'string' } } }) }),
      [`${P}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified`],
    ],
    ['metadata that is not an object', obj({ metadata: { type: 'string' } }), [`${P}.properties[metadata].type: Invalid value: "string": must be object`]],
    ['a kind that is not a string', obj({ kind: { type: 'integer' } }), [`${P}.properties[kind].type: Invalid value: "integer": must be string`]],
    [
      'preserve-unknown-fields set to false',
      obj({ a: { type: 'object', 'x-kubernetes-preserve-unknown-fields': false } }),
      [`${P}.properties[a].x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined`],
    ],
    ['uniqueItems', obj({ a: { type: 'array', items: { type: 'string' }, uniqueItems: true } }), [`${P}.properties[a].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic`]],
    ['a $ref', obj({ a: { $ref: '#/x' } }), [`${P}.properties[a].$ref: Forbidden: $ref is not supported`]],
    ['a nullable root', { type: 'object', nullable: true }, [`${P}.nullable: Forbidden: nullable cannot be true at the root`]],
    ['an unknown type', obj({ a: { type: 'text' } }), [`${P}.properties[a].type: Unsupported value: "text": supported values: "array", "boolean", "integer", "number", "object", "string"`]],
    ['a default in top-level metadata', obj({ metadata: { type: 'object', default: {} } }), [`${P}.properties[metadata].default: Forbidden: must not be set in top-level metadata`]],
    [
      'properties together with additionalProperties',
      obj({ a: obj({ x: { type: 'string' } }, { additionalProperties: { type: 'string' } }) }),
      [`${P}.properties[a].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive`],
    ],
    [
      'a map list whose key is neither required nor defaulted',
      obj({ ports: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'], items: obj({ name: { type: 'string' } }) } }),
      [`${P}.properties[ports].items.properties[name].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property`],
    ],
    [
      'a map list whose key is not an item property',
      obj({ ports: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['id'], items: obj({ name: { type: 'string' } }) } }),
      [`${P}.properties[ports].x-kubernetes-list-map-keys: Invalid value: []string{"id"}: entries must all be names of item properties`],
    ],
    [
      'a map list of strings',
      obj({ names: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['a'], items: { type: 'string' } } }),
      [`${P}.properties[names].items.type: Invalid value: "string": must be object if parent array's x-kubernetes-list-type is map`],
    ],
    ['a map list without keys', obj({ l: { type: 'array', 'x-kubernetes-list-type': 'map', items: obj({ a: { type: 'string' } }) } }), [`${P}.properties[l].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map`]],
    ['list keys without a map list', obj({ l: { type: 'array', 'x-kubernetes-list-map-keys': ['a'], items: obj({ a: { type: 'string' } }, { required: ['a'] }) } }), [`${P}.properties[l].x-kubernetes-list-type: Required value: must be map if x-kubernetes-list-map-keys is non-empty`]],
    ['a list type on a string', obj({ s: { type: 'string', 'x-kubernetes-list-type': 'set' } }), [`${P}.properties[s].type: Invalid value: "string": must be array if x-kubernetes-list-type is specified`]],
    ['an unknown list type', obj({ l: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'bag' } }), [`${P}.properties[l].x-kubernetes-list-type: Unsupported value: "bag": supported values: "atomic", "set", "map"`]],
  ]
  for (const [name, schema, expected] of refused) {
    it(`refuses ${name}`, () => assert.deepEqual(problems(schema), expected))
  }

  it('sorts the structural causes by their text, as upstream does, before the other rules', () => {
    const schema = obj({ z: {}, a: {}, l: { type: 'array', items: { type: 'string' }, uniqueItems: true } })
    assert.deepEqual(problems(schema), [
      `${P}.properties[a].type: Required value: must not be empty for specified object fields`,
      `${P}.properties[z].type: Required value: must not be empty for specified object fields`,
      `${P}.properties[l].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic`,
    ])
  })
})
