import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ApplyInvalidError, applyObject, fieldSetOf } from '../../../core/apply/index.js'
import { applyShapeOf } from '../../../core/apply/crd-shape.js'
import type { JSONSchemaProps } from '../../../core/crd-schema/schema.js'
import { API_VERSION, cronTab, cronTabSchema, TYPE_NAME } from './crd-fixtures.js'

const shape = applyShapeOf(cronTabSchema)
const opts = { now: new Date('2024-05-01T10:00:00Z'), apiVersion: API_VERSION, typeName: TYPE_NAME, shape, force: false }

/** The message of the ApplyInvalidError `config` raises, or undefined when it applies. */
function refusal(config: Record<string, unknown>, schemaShape = shape): string | undefined {
  try {
    applyObject(undefined, config, 'tool', { ...opts, shape: schemaShape })
    return undefined
  } catch (err) {
    if (err instanceof ApplyInvalidError) return err.message
    throw err
  }
}

describe('a custom resource seen through its schema', () => {
  it('converts a schema once and answers the same shape for the same schema object', () => {
    assert.equal(applyShapeOf(cronTabSchema), shape)
    assert.notEqual(applyShapeOf(structuredClone(cronTabSchema)), shape)
  })

  it('owns fields per property, list-maps per key (a key default filled in), sets per value, atomic lists and objects whole', () => {
    const obj = cronTab({
      cronSpec: '* * * * */5',
      ports: [{ containerPort: 80, name: 'web' }, { containerPort: 53, protocol: 'UDP' }],
      tags: ['a', 'b'],
      args: ['-v'],
      steps: [{ name: 'one' }],
      labels: { team: 'x' },
      selector: { app: 'web' },
      port: 8080,
    })
    assert.deepEqual(fieldSetOf(obj, shape).toFieldsV1(), {
      'f:apiVersion': {},
      'f:kind': {},
      'f:metadata': { 'f:name': {}, 'f:namespace': {} },
      'f:spec': {
        'f:args': {},
        'f:cronSpec': {},
        'f:labels': { 'f:team': {} },
        'f:port': {},
        'f:ports': {
          'k:{"containerPort":53,"protocol":"UDP"}': { '.': {}, 'f:containerPort': {}, 'f:protocol': {} },
          'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {}, 'f:name': {} },
        },
        'f:selector': {},
        'f:steps': {},
        'f:tags': { 'v:"a"': {}, 'v:"b"': {} },
      },
    })
  })

  it('owns what preserve-unknown-fields keeps per key, objects granular and lists whole, at any depth', () => {
    const obj = cronTab({ config: { mode: 'fast', extra: { deep: { deeper: 1 }, list: [1, 2] } } })
    assert.deepEqual(fieldSetOf(obj, shape).toFieldsV1()['f:spec'], {
      'f:config': {
        'f:mode': {},
        'f:extra': { '.': {}, 'f:deep': { '.': {}, 'f:deeper': {} }, 'f:list': {} },
      },
    })
  })

  it('reads an embedded resource metadata as ObjectMeta (labels per key) and the rest of it as untyped', () => {
    const obj = cronTab({
      template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', labels: { a: 'b' } }, spec: { containers: [{ name: 'c' }] } },
    })
    assert.deepEqual(fieldSetOf(obj, shape).toFieldsV1()['f:spec'], {
      'f:template': {
        'f:apiVersion': {},
        'f:kind': {},
        'f:metadata': { 'f:labels': { 'f:a': {} }, 'f:name': {} },
        'f:spec': { '.': {}, 'f:containers': {} },
      },
    })
  })

  it('refuses a field the schema does not declare, worded as upstream', () => {
    assert.equal(
      refusal(cronTab({ cronSpec: 'x', foo: 1 })),
      `failed to create typed patch object (default/ct; stable.example.com/v1, Kind=CronTab): .spec.foo: field not declared in schema`,
    )
    assert.match(refusal(cronTab(undefined, { colour: 'blue' })) ?? '', /: \.colour: field not declared in schema$/)
  })

  it('looks inside atomic lists and objects and inside embedded metadata for undeclared fields', () => {
    assert.match(refusal(cronTab({ steps: [{ name: 'a' }, { name: 'b', bogus: true }] })) ?? '', /: \.spec\.steps\[1\]\.bogus: field not declared in schema$/)
    assert.match(refusal(cronTab({ selector: { app: 'x', zone: 'y' } })) ?? '', /: \.spec\.selector\.zone: field not declared in schema$/)
    assert.match(
      refusal(cronTab({ template: { metadata: { name: 'p', colour: 'x' } } })) ?? '',
      /: \.spec\.template\.metadata\.colour: field not declared in schema$/,
    )
  })

  it('accepts anything below preserve-unknown-fields, an embedded resource that preserves, additionalProperties and int-or-string', () => {
    assert.equal(refusal(cronTab({ config: { mode: 'x', any: { thing: [1, { at: 'all' }] } } })), undefined)
    assert.equal(refusal(cronTab({ template: { apiVersion: 'v1', kind: 'Pod', spec: { whatever: true } } })), undefined)
    assert.equal(refusal(cronTab({ labels: { 'any-key': 'v' }, port: 'http' })), undefined)
  })

  it('refuses duplicate list-map keys and items without a key that has no default', () => {
    const duplicated = refusal(cronTab({ ports: [{ containerPort: 80 }, { containerPort: 80, protocol: 'TCP' }] })) ?? ''
    assert.match(duplicated, /: \.spec\.ports: duplicate entries for key \[containerPort=80,protocol="TCP"\]$/)
    const keyless = refusal(cronTab({ ports: [{ protocol: 'TCP' }] })) ?? ''
    assert.match(keyless, /\.spec\.ports: element 0: associative list with keys has an element that omits key field "containerPort" \(and doesn't have default value\)$/)
  })

  it('lets preserve-unknown-fields on an ancestor open every object below it, and treats a property-less object as free-form', () => {
    const schema: JSONSchemaProps = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          'x-kubernetes-preserve-unknown-fields': true,
          properties: { nested: { type: 'object', properties: { known: { type: 'string' } } } },
        },
        closed: { type: 'object', properties: { inner: { type: 'object', properties: { known: { type: 'string' } } } } },
        open: { type: 'object' },
      },
    }
    const s = applyShapeOf(schema)
    assert.equal(refusal(cronTab({ nested: { known: 'a', unknown: 'b' } }), s), undefined)
    assert.equal(refusal(cronTab(undefined, { open: { a: { b: 1 } } }), s), undefined)
    assert.match(refusal(cronTab(undefined, { closed: { inner: { unknown: 1 } } }), s) ?? '', /: \.closed\.inner\.unknown: field not declared in schema$/)
  })
})
