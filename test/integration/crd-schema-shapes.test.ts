/**
 * Every shape a published CRD's schema takes (typed list items, typed map
 * values, booleans where a schema may stand, defaults and enums of any JSON
 * type, value validations, extensions) is accepted in each decoding mode,
 * read back unchanged, and seen by validation, pruning, defaulting, CEL and
 * OpenAPI of the custom resources it defines.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { stringify } from 'yaml'
import { encodeProtobuf } from '../../core/encoding/protobuf.js'
import { definition, schema } from '../fixtures/crd-shapes.js'
import { CRDS, installDefinition } from './crd-fixtures.js'
import { type Reply, startServer, type TestClient } from './harness.js'

function storedSchema(crd: { spec: { versions: { schema: { openAPIV3Schema: unknown } }[] } }): unknown {
  return crd.spec.versions[0]!.schema.openAPIV3Schema
}

describe('CRD schemas of every shape', () => {
  let api: TestClient
  before(async () => {
    api = await startServer()
  })
  after(async () => {
    await api.server.shutdown()
  })

  const modes: [string, (crd: object) => Promise<Reply>][] = [
    ['JSON with fieldValidation=Strict', (crd) => api.post(`${CRDS}?fieldValidation=Strict`, crd)],
    ['JSON with fieldValidation=Warn', (crd) => api.post(`${CRDS}?fieldValidation=Warn`, crd)],
    ['JSON with fieldValidation=Ignore', (crd) => api.post(`${CRDS}?fieldValidation=Ignore`, crd)],
    ['YAML with fieldValidation=Strict', (crd) => api.post(`${CRDS}?fieldValidation=Strict`, stringify(crd), { headers: { 'content-type': 'application/yaml' } })],
    ['protobuf', (crd) => api.post(CRDS, encodeProtobuf(crd as Record<string, unknown>), { headers: { 'content-type': 'application/vnd.kubernetes.protobuf' } })],
  ]
  modes.forEach(([mode, create], i) => {
    it(`creates a definition from ${mode} and reads back exactly what was written`, async () => {
      const crd = definition(`shape${i}`)
      const res = await create(crd)
      assert.equal(res.status, 201, res.text)
      assert.equal(res.headers.get('warning'), null)
      assert.deepEqual(storedSchema(res.body), schema())
      const got = await api.get(`${CRDS}/${crd.metadata.name}`)
      assert.deepEqual(storedSchema(got.body), schema())
      const proto = await api.call('GET', `${CRDS}/${crd.metadata.name}`, { headers: { accept: 'application/vnd.kubernetes.protobuf' } })
      assert.equal(proto.status, 200)
    })
  })

  it('keeps the nested schemas through a replace, a merge patch and a server-side apply', async () => {
    const crd = definition('shapeupdated')
    await installDefinition(api, crd)
    const current = (await api.get(`${CRDS}/${crd.metadata.name}`)).body
    const replaced = await api.put(`${CRDS}/${crd.metadata.name}?fieldValidation=Strict`, current)
    assert.equal(replaced.status, 200, replaced.text)
    assert.deepEqual(storedSchema(replaced.body), schema())
    const patched = await api.patch(`${CRDS}/${crd.metadata.name}`, { metadata: { labels: { a: 'b' } } }, 'application/merge-patch+json')
    assert.equal(patched.status, 200, patched.text)
    assert.deepEqual(storedSchema(patched.body), schema())
    const applied = await api.patch(
      `${CRDS}/${crd.metadata.name}?fieldManager=tester&force=true&fieldValidation=Strict`,
      stringify(definition('shapeupdated')),
      'application/apply-patch+yaml',
    )
    assert.equal(applied.status, 200, applied.text)
    assert.deepEqual(storedSchema(applied.body), schema())
  })

  it('refuses the shapes a structural schema may not have with upstream\'s messages, storing nothing', async () => {
    const crd = definition('unstructural')
    const spec = crd.spec.versions[0]!.schema.openAPIV3Schema.properties.spec.properties as Record<string, unknown>
    spec['tuple'] = { type: 'array', items: [{ type: 'string' }] }
    spec['labels'] = { type: 'object', additionalProperties: false }
    const res = await api.post(`${CRDS}?fieldValidation=Strict`, crd)
    assert.equal(res.status, 422, res.text)
    assert.match(res.body.message, /properties\[spec\]\.properties\[tuple\]\.items: Forbidden: items must be a schema object and not an array/)
    assert.equal((await api.get(`${CRDS}/${crd.metadata.name}`)).status, 404)
  })

  describe('custom resources of such a definition', () => {
    const objects = '/apis/shapes.example.com/v1/namespaces/default/shapecrs'
    before(async () => {
      await installDefinition(api, definition('shapecr'))
    })

    function object(name: string, spec: Record<string, unknown>) {
      return { apiVersion: 'shapes.example.com/v1', kind: 'Shapecr', metadata: { name }, spec }
    }

    it('validates list items and map values against their schemas', async () => {
      const res = await api.post(objects, object('bad', { tags: ['ok', 'NOT-OK', 'toolong'], labels: { x: 'c' }, matrix: { m: [1, 0] } }))
      assert.equal(res.status, 422, res.text)
      const fields = res.body.details.causes.map((c: { field: string }) => c.field).sort()
      assert.deepEqual(fields, ['spec.labels.x', 'spec.matrix.m[1]', 'spec.tags[1]', 'spec.tags[1]', 'spec.tags[2]'])
      assert.equal((await api.get(`${objects}/bad`)).status, 404)
    })

    it('prunes unknown fields inside items, defaults them, and runs their CEL rules', async () => {
      const res = await api.post(objects, object('good', { tags: ['a'], rules: [{ name: 'r', colour: 'red' }], blob: { kept: { deep: 1 } } }))
      assert.equal(res.status, 201, res.text)
      assert.deepEqual(res.body.spec.rules, [{ name: 'r', weight: 1 }])
      assert.deepEqual(res.body.spec.blob, { kept: { deep: 1 } })
      assert.deepEqual(res.body.spec.settings, { verbose: false })
      const heavy = await api.post(objects, object('heavy', { tags: ['a'], rules: [{ name: 'r', weight: 101 }] }))
      assert.equal(heavy.status, 422, heavy.text)
      assert.match(heavy.body.message, /spec\.rules\[0\]: Invalid value: "object": weight at most 100/)
    })

    it('publishes the nested schemas in OpenAPI v3', async () => {
      const doc = (await api.get('/openapi/v3/apis/shapes.example.com/v1')).body
      const spec = doc.components.schemas['com.example.shapes.v1.Shapecr'].properties.spec
      assert.deepEqual(spec.properties.tags.items, { type: 'string', maxLength: 5, pattern: '^[a-z]+$' })
      assert.deepEqual(spec.properties.labels.additionalProperties, { type: 'string', enum: ['a', 'b'] })
      assert.equal(spec.properties.rules.items.properties.weight.default, 1)
    })
  })
})
