import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { applySchemaDefaults } from '../../../core/crd/defaults.js'
import { matchesFormat } from '../../../core/validation/formats.js'
import { prune } from '../../../core/crd/prune.js'
import type { StatusError } from '../../../core/machinery/status-error.js'
import type { JSONSchemaProps } from '../../../core/crd-schema/schema.js'

const schema: JSONSchemaProps = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        replicas: { type: 'integer', default: 1 },
        mode: { type: 'string', default: 'fast' },
        note: { type: 'string', nullable: true, default: 'n' },
        plain: { type: 'string' },
        ports: {
          type: 'array',
          items: { type: 'object', properties: { name: { type: 'string' }, protocol: { type: 'string', default: 'TCP' } } },
        },
        limits: { type: 'object', additionalProperties: { type: 'object', properties: { max: { type: 'integer', default: 5 } } } },
        raw: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { known: { type: 'object', properties: { a: { type: 'string' } } } } },
        template: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { spec: { type: 'object' } } },
        anything: { type: 'object', additionalProperties: true },
      },
    },
  },
}

describe('pruning unknown fields', () => {
  it('drops what the schema does not specify and answers the dropped paths', () => {
    const obj: Record<string, unknown> = {
      apiVersion: 'x.io/v1',
      kind: 'Thing',
      metadata: { name: 't', labels: { a: 'b' } },
      status: { ready: true },
      spec: {
        replicas: 2,
        bogus: 1,
        ports: [{ name: 'a', extra: 1 }],
        limits: { cpu: { max: 1, junk: 2 } },
        raw: { free: { form: 1 }, known: { a: 'x', b: 'y' } },
        template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { x: 1 }, other: 1 },
        anything: { k: { deep: 1 } },
      },
    }
    assert.deepEqual(prune(obj, schema), [
      'status',
      'spec.bogus',
      'spec.ports[0].extra',
      'spec.limits.cpu.junk',
      'spec.raw.known.b',
      // An object schema without properties specifies no fields at all.
      'spec.template.spec.x',
      'spec.template.other',
    ])
    assert.deepEqual(obj, {
      apiVersion: 'x.io/v1',
      kind: 'Thing',
      metadata: { name: 't', labels: { a: 'b' } },
      spec: {
        replicas: 2,
        ports: [{ name: 'a' }],
        limits: { cpu: { max: 1 } },
        raw: { free: { form: 1 }, known: { a: 'x' } },
        template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: {} },
        anything: { k: { deep: 1 } },
      },
    })
  })

  it('keeps everything under a root that preserves unknown fields', () => {
    const obj = { spec: { a: 1 }, other: [1] }
    assert.deepEqual(prune(obj, { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }), [])
    assert.deepEqual(obj, { spec: { a: 1 }, other: [1] })
  })
})

describe('structural defaulting', () => {
  it('fills absent properties, inside lists and map values, and leaves set ones alone', () => {
    const obj: Record<string, unknown> = {
      spec: { replicas: 3, ports: [{ name: 'a' }, { name: 'b', protocol: 'UDP' }], limits: { cpu: {}, mem: { max: 9 } } },
    }
    applySchemaDefaults(obj, schema)
    assert.deepEqual(obj, {
      spec: {
        replicas: 3,
        mode: 'fast',
        note: 'n',
        ports: [
          { name: 'a', protocol: 'TCP' },
          { name: 'b', protocol: 'UDP' },
        ],
        limits: { cpu: { max: 5 }, mem: { max: 9 } },
      },
    })
  })

  it('replaces a null the schema does not allow, keeps an allowed null, and drops a null without default', () => {
    const obj: Record<string, unknown> = { spec: { replicas: null, note: null, plain: null } }
    applySchemaDefaults(obj, schema)
    assert.deepEqual(obj, { spec: { replicas: 1, mode: 'fast', note: null } })
  })

  it('does not default inside an absent parent, and gives each object its own copy', () => {
    const s: JSONSchemaProps = {
      type: 'object',
      properties: { a: { type: 'object', properties: { b: { type: 'string', default: 'x' } } }, c: { type: 'object', default: { d: 1 } } },
    }
    const one: Record<string, unknown> = {}
    const two: Record<string, unknown> = {}
    applySchemaDefaults(one, s)
    applySchemaDefaults(two, s)
    assert.deepEqual(one, { c: { d: 1 } })
    ;(one['c'] as Record<string, unknown>)['d'] = 2
    assert.deepEqual(two, { c: { d: 1 } })
  })

  it("stops once the defaults placed pass what can be stored, with etcd's refusal, before building the object", () => {
    // A default of 500 kB on each item of 20,000 empty items: 10 GB once defaulted, from a body of 60 kB.
    const large = 'a'.repeat(500_000)
    for (const fill of [large, { text: large }]) {
      const s: JSONSchemaProps = { type: 'array', items: { type: 'object', properties: { x: { type: 'object', default: fill } } } }
      const items = Array.from({ length: 20_000 }, () => ({}))
      assert.throws(
        () => applySchemaDefaults(items, s),
        (err: StatusError) => err.code === 500 && err.message === 'etcdserver: request is too large',
      )
      // Three fit: what one value may take (1.5 MiB) is not passed.
      const few = [{}, {}, {}]
      applySchemaDefaults(few, s)
      assert.deepEqual(few, [{ x: fill }, { x: fill }, { x: fill }])
    }
  })
})

describe('string formats', () => {
  const cases: [string, string, boolean][] = [
    ['ipv6', '2001:db8::1', true],
    ['ipv6', '::ffff:10.0.0.1', true],
    ['ipv6', '2001:db8:::1', false],
    ['cidr', '10.0.0.0/8', true],
    ['cidr', '10.0.0.0/33', false],
    ['date', '2023-02-29', false],
    ['date', '2024-02-29', true],
    ['date', '0050-06-30', true],
    ['date', '0004-02-29', true],
    ['date', '0000-02-29', true],
    ['date', '0100-02-29', false],
    ['date-time', '0001-01-01T00:00:02Z', true],
    ['byte', 'aGVsbG8=', true],
    ['byte', 'not base64!', false],
    ['hostname', 'my-host.example.com', true],
    ['hostname', '-bad', false],
    ['email', 'a@b.c', true],
    ['unknown-format', 'whatever', true],
  ]
  for (const [format, value, ok] of cases) {
    it(`${ok ? 'accepts' : 'refuses'} ${JSON.stringify(value)} as ${format}`, () => assert.equal(matchesFormat(format, value), ok))
  }
})
