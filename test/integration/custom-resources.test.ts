/**
 * Custom resources served from their CustomResourceDefinitions, in process:
 * the definition's conditions, discovery, every verb on the instances,
 * schema validation, defaulting, pruning, the status and scale
 * subresources, printer columns, and the cleanup on deletion.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { eventually, readEvents, startServer, type TestClient } from './harness.js'
import { CRDS, cronTab, cronTabDefinition, installDefinition } from './crd-fixtures.js'

const CRONTABS = '/apis/stable.example.com/v1/namespaces/default/crontabs'
const TABLE = 'application/json;as=Table;g=meta.k8s.io;v=v1'
const AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList'

type Condition = { type: string; status: string; reason: string; message: string }
const causes = (body: { details?: { causes?: { field: string; message: string }[] } }) =>
  (body.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`)

describe('a CustomResourceDefinition', () => {
  let api: TestClient
  before(async () => {
    api = await startServer()
    await installDefinition(api, cronTabDefinition())
  })

  it('has its names accepted and is established', async () => {
    const crd = (await api.get(`${CRDS}/crontabs.stable.example.com`)).body
    const conditions = Object.fromEntries(crd.status.conditions.map((c: Condition) => [c.type, c]))
    assert.deepEqual(
      { status: conditions.NamesAccepted.status, reason: conditions.NamesAccepted.reason, message: conditions.NamesAccepted.message },
      { status: 'True', reason: 'NoConflicts', message: 'no conflicts found' },
    )
    assert.equal(conditions.Established.status, 'True')
    assert.equal(conditions.Established.reason, 'InitialNamesAccepted')
    assert.deepEqual(crd.status.acceptedNames, {
      plural: 'crontabs',
      singular: 'crontab',
      kind: 'CronTab',
      listKind: 'CronTabList',
      shortNames: ['ct'],
      categories: ['all'],
    })
    assert.deepEqual(crd.status.storedVersions, ['v1'])
  })

  it('is in legacy and aggregated discovery, with its short names, categories and subresources', async () => {
    const groups = (await api.get('/apis')).body.groups.map((g: { name: string }) => g.name)
    assert.ok(groups.includes('stable.example.com'))
    const list = (await api.get('/apis/stable.example.com/v1')).body
    assert.deepEqual(
      list.resources.map((r: { name: string; kind: string }) => `${r.name} ${r.kind}`),
      ['crontabs CronTab', 'crontabs/scale Scale', 'crontabs/status CronTab'],
    )
    assert.deepEqual(list.resources[0].shortNames, ['ct'])
    assert.deepEqual(list.resources[0].categories, ['all'])
    const aggregated = (await api.get('/apis', { headers: { accept: AGGREGATED } })).body
    const group = aggregated.items.find((g: { metadata: { name: string } }) => g.metadata.name === 'stable.example.com')
    assert.equal(group.versions[0].resources[0].resource, 'crontabs')
    assert.equal(group.versions[0].resources[0].scope, 'Namespaced')
  })

  it('serves every verb on its instances', async () => {
    const created = await api.post(CRONTABS, cronTab('basic'))
    assert.equal(created.status, 201, created.text)
    assert.equal(created.body.metadata.generation, 1)
    // The schema's default.
    assert.equal(created.body.spec.replicas, 1)
    assert.equal((await api.get(`${CRONTABS}/basic`)).body.spec.image, 'cron')
    const list = await api.get(CRONTABS)
    assert.equal(list.body.kind, 'CronTabList')
    assert.deepEqual(list.body.items.map((i: { metadata: { name: string } }) => i.metadata.name), ['basic'])
    const merged = await api.patch(`${CRONTABS}/basic`, { spec: { image: 'cron:2' } }, 'application/merge-patch+json')
    assert.equal(merged.status, 200, merged.text)
    assert.equal(merged.body.metadata.generation, 2)
    const jsonPatched = await api.patch(`${CRONTABS}/basic`, [{ op: 'replace', path: '/spec/replicas', value: 3 }], 'application/json-patch+json')
    assert.equal(jsonPatched.body.spec.replicas, 3)
    const put = await api.put(`${CRONTABS}/basic`, { ...jsonPatched.body, spec: { ...jsonPatched.body.spec, color: 'red' } })
    assert.equal(put.status, 200, put.text)
    assert.equal(put.body.spec.color, 'red')
    const deleted = await api.delete(`${CRONTABS}/basic`)
    assert.equal(deleted.status, 200)
    assert.equal((await api.get(`${CRONTABS}/basic`)).status, 404)
  })

  it('refuses a strategic merge patch with 415, as upstream does for custom resources', async () => {
    await api.post(CRONTABS, cronTab('smp'))
    const res = await api.patch(`${CRONTABS}/smp`, { spec: { image: 'x' } }, 'application/strategic-merge-patch+json')
    assert.equal(res.status, 415)
    assert.equal((await api.get(`${CRONTABS}/smp`)).body.spec.image, 'cron')
  })

  it('validates instances against the schema and its rules, storing nothing when invalid', async () => {
    const res = await api.post(CRONTABS, cronTab('bad', { replicas: 20, color: 'pink', image: 'forbidden' }))
    assert.equal(res.status, 422, res.text)
    assert.equal(res.body.reason, 'Invalid')
    assert.match(res.body.message, /^CronTab.stable.example.com "bad" is invalid: /)
    const fields = (res.body.details.causes as { field: string }[]).map((c) => c.field)
    for (const field of ['spec.cronSpec', 'spec.replicas', 'spec.color', 'spec.image']) assert.ok(fields.includes(field), `${field} in ${res.text}`)
    assert.ok(causes(res.body).includes('spec.cronSpec: Required value'), res.text)
    assert.ok(causes(res.body).some((c) => c.startsWith('spec.image: ') && c.endsWith('image may not be forbidden')), res.text)
    assert.equal((await api.get(`${CRONTABS}/bad`)).status, 404)
  })

  it('checks transition rules against the stored object', async () => {
    const crd = cronTabDefinition({ names: { plural: 'counters', kind: 'Counter' } })
    crd.metadata.name = 'counters.stable.example.com'
    const schema = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: { count: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self >= oldSelf', message: 'count may only grow' }] } },
        },
      },
    }
    crd.spec.versions = [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }]
    await installDefinition(api, crd)
    const path = '/apis/stable.example.com/v1/namespaces/default/counters'
    assert.equal((await api.post(path, { apiVersion: 'stable.example.com/v1', kind: 'Counter', metadata: { name: 'c' }, spec: { count: 5 } })).status, 201)
    assert.equal((await api.patch(`${path}/c`, { spec: { count: 6 } }, 'application/merge-patch+json')).status, 200)
    const shrink = await api.patch(`${path}/c`, { spec: { count: 2 } }, 'application/merge-patch+json')
    assert.equal(shrink.status, 422, shrink.text)
    assert.deepEqual(causes(shrink.body), ['spec.count: Invalid value: "integer": count may only grow'])
    assert.equal((await api.get(`${path}/c`)).body.spec.count, 6)
  })

  it('lets an update keep a value the schema has since come to refuse (ratcheting), not change it', async () => {
    const crd = cronTabDefinition({ names: { plural: 'gadgets', kind: 'Gadget' } })
    crd.metadata.name = 'gadgets.stable.example.com'
    const schemaWithMax = (maximum: number) => ({
      openAPIV3Schema: {
        type: 'object',
        properties: { spec: { type: 'object', properties: { size: { type: 'integer', maximum }, name: { type: 'string' } } } },
      },
    })
    crd.spec.versions = [{ name: 'v1', served: true, storage: true, schema: schemaWithMax(100) }]
    await installDefinition(api, crd)
    const path = '/apis/stable.example.com/v1/namespaces/default/gadgets'
    const gadget = { apiVersion: 'stable.example.com/v1', kind: 'Gadget', metadata: { name: 'g' }, spec: { size: 50, name: 'a' } }
    assert.equal((await api.post(path, gadget)).status, 201)
    const stored = (await api.get(`${CRDS}/gadgets.stable.example.com`)).body
    stored.spec.versions[0].schema = schemaWithMax(10)
    assert.equal((await api.put(`${CRDS}/gadgets.stable.example.com`, stored)).status, 200)
    await eventually('the tighter schema is served', async () => {
      const res = await api.post(`${path}?dryRun=All`, { ...gadget, metadata: { name: 'probe' } })
      return res.status === 422
    })
    const other = await api.patch(`${path}/g`, { spec: { name: 'b' } }, 'application/merge-patch+json')
    assert.equal(other.status, 200, other.text)
    const changed = await api.patch(`${path}/g`, { spec: { size: 60 } }, 'application/merge-patch+json')
    assert.equal(changed.status, 422, changed.text)
    assert.deepEqual(causes(changed.body), ['spec.size: Invalid value: 60: spec.size in body should be less than or equal to 10'])
    assert.equal((await api.get(`${path}/g`)).body.spec.size, 50)
  })

  it('prunes unknown fields, and field validation reports them', async () => {
    const body = { ...cronTab('pruned'), spec: { cronSpec: '* * * * *', extra: 'x' }, other: 1 }
    const strict = await api.post(`${CRONTABS}?fieldValidation=Strict`, body)
    assert.equal(strict.status, 400, strict.text)
    assert.match(strict.body.message, /strict decoding error: unknown field "other", unknown field "spec.extra"|strict decoding error: unknown field "spec.extra", unknown field "other"/)
    const warned = await api.post(CRONTABS, body)
    assert.equal(warned.status, 201, warned.text)
    assert.match(warned.headers.get('warning') ?? '', /unknown field \\"spec.extra\\"/)
    assert.equal(warned.body.spec.extra, undefined)
    assert.equal(warned.body.other, undefined)
  })

  it('runs a dry-run create without storing it', async () => {
    const res = await api.post(`${CRONTABS}?dryRun=All`, cronTab('dry'))
    assert.equal(res.status, 201, res.text)
    assert.equal((await api.get(`${CRONTABS}/dry`)).status, 404)
  })

  it('keeps status and the rest apart through the status subresource', async () => {
    const created = await api.post(CRONTABS, { ...cronTab('status'), status: { phase: 'ignored' } })
    assert.equal(created.body.status, undefined)
    const status = await api.patch(`${CRONTABS}/status/status`, { status: { phase: 'Running' }, spec: { image: 'ignored' } }, 'application/merge-patch+json')
    assert.equal(status.status, 200, status.text)
    assert.equal(status.body.status.phase, 'Running')
    assert.equal(status.body.spec.image, 'cron')
    assert.equal(status.body.metadata.generation, 1)
    const main = await api.patch(`${CRONTABS}/status`, { status: { phase: 'ignored' }, spec: { image: 'new' } }, 'application/merge-patch+json')
    assert.equal(main.body.status.phase, 'Running')
    assert.equal(main.body.metadata.generation, 2)
  })

  it('reads and writes replicas through the scale subresource', async () => {
    await api.post(CRONTABS, cronTab('scaled'))
    await api.patch(`${CRONTABS}/scaled/status`, { status: { replicas: 1, labelSelector: 'app=cron' } }, 'application/merge-patch+json')
    const scale = await api.get(`${CRONTABS}/scaled/scale`)
    assert.equal(scale.status, 200, scale.text)
    assert.deepEqual([scale.body.kind, scale.body.spec.replicas, scale.body.status.replicas, scale.body.status.selector], ['Scale', 1, 1, 'app=cron'])
    const scaled = await api.patch(`${CRONTABS}/scaled/scale`, { spec: { replicas: 4 } }, 'application/merge-patch+json')
    assert.equal(scaled.status, 200, scaled.text)
    assert.equal((await api.get(`${CRONTABS}/scaled`)).body.spec.replicas, 4)
    const negative = await api.patch(`${CRONTABS}/scaled/scale`, { spec: { replicas: -1 } }, 'application/merge-patch+json')
    assert.equal(negative.status, 422, negative.text)
    assert.ok(causes(negative.body).includes('.spec.replicas: Invalid value: -1: should be a non-negative integer'), negative.text)
    assert.equal((await api.get(`${CRONTABS}/scaled`)).body.spec.replicas, 4)
  })

  it('prints its additional printer columns in tables', async () => {
    await api.post(CRONTABS, cronTab('printed'))
    const table = (await api.get(`${CRONTABS}/printed`, { headers: { accept: TABLE } })).body
    assert.deepEqual(
      table.columnDefinitions.map((c: { name: string; type: string }) => `${c.name}:${c.type}`),
      ['Name:string', 'Spec:string', 'Replicas:integer', 'Age:date'],
    )
    assert.deepEqual(table.rows[0].cells.slice(0, 3), ['printed', '* * * * */5', 1])
  })

  it('selects instances by their selectable fields', async () => {
    await api.post(CRONTABS, cronTab('blue', { cronSpec: '* * * * *', color: 'blue' }))
    await api.post(CRONTABS, cronTab('green', { cronSpec: '* * * * *', color: 'green' }))
    const blue = await api.get(`${CRONTABS}?fieldSelector=spec.color%3Dblue`)
    assert.equal(blue.status, 200, blue.text)
    assert.deepEqual(blue.body.items.map((i: { metadata: { name: string } }) => i.metadata.name), ['blue'])
    const unknown = await api.get(`${CRONTABS}?fieldSelector=spec.image%3Dx`)
    assert.equal(unknown.status, 400, unknown.text)
    // Custom resources convert their own field labels, in the core kinds' words.
    assert.equal(unknown.body.message, 'field label not supported: spec.image')
  })

  it('is published in OpenAPI v3 and v2 with its schema', async () => {
    const index = (await api.get('/openapi/v3')).body
    const url = index.paths['apis/stable.example.com/v1']?.serverRelativeURL
    assert.ok(url, JSON.stringify(Object.keys(index.paths)))
    const doc = (await api.get(url)).body
    const schema = doc.components.schemas['com.example.stable.v1.CronTab']
    assert.equal(schema.properties.spec.properties.replicas.maximum, 10)
    assert.deepEqual(schema['x-kubernetes-group-version-kind'], [{ group: 'stable.example.com', version: 'v1', kind: 'CronTab' }])
    const v2 = (await api.get('/openapi/v2')).body
    assert.ok(v2.definitions['com.example.stable.v1.CronTab'])
  })

  it('is created and updated by server-side apply, with conflicts between managers', async () => {
    const yaml = 'apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: applied\nspec:\n  cronSpec: "* * * * *"\n  image: a\n'
    const created = await api.patch(`${CRONTABS}/applied?fieldManager=first`, yaml, 'application/apply-patch+yaml')
    assert.equal(created.status, 201, created.text)
    assert.equal(created.body.metadata.managedFields[0].manager, 'first')
    const conflict = await api.patch(`${CRONTABS}/applied?fieldManager=second`, yaml.replace('image: a', 'image: b'), 'application/apply-patch+yaml')
    assert.equal(conflict.status, 409, conflict.text)
    assert.match(conflict.body.message, /conflict with "first": \.spec\.image/)
    const undeclared = await api.patch(`${CRONTABS}/applied?fieldManager=first`, `${yaml}  extra: 1\n`, 'application/apply-patch+yaml')
    assert.match(undeclared.body.message ?? '', /\.spec\.extra: field not declared in schema/)
  })

  it('is collected with its owner, and collects what it owns', async () => {
    const owner = await api.post(CRONTABS, cronTab('owner'))
    const ref = { apiVersion: 'stable.example.com/v1', kind: 'CronTab', name: 'owner', uid: owner.body.metadata.uid }
    const owned = await api.post('/api/v1/namespaces/default/configmaps', { metadata: { name: 'owned-by-crontab', ownerReferences: [ref] } })
    assert.equal(owned.status, 201, owned.text)
    const child = await api.post(CRONTABS, { ...cronTab('child'), metadata: { name: 'child', ownerReferences: [ref] } })
    assert.equal(child.status, 201, child.text)
    await api.delete(`${CRONTABS}/owner`)
    await eventually('the dependents are collected', async () =>
      (await api.get('/api/v1/namespaces/default/configmaps/owned-by-crontab')).status === 404 && (await api.get(`${CRONTABS}/child`)).status === 404,
    )
  })

  it('streams changes to a watch', async () => {
    const list = await api.get(CRONTABS)
    const res = await api.server.fetch(new Request(`http://in-process${CRONTABS}?watch=1&resourceVersion=${list.body.metadata.resourceVersion}`))
    const events = readEvents(res, 2)
    await api.post(CRONTABS, cronTab('watched'))
    await api.delete(`${CRONTABS}/watched`)
    assert.deepEqual((await events).map((e) => `${e.type} ${e.object.metadata.name}`), ['ADDED watched', 'DELETED watched'])
  })
})

describe('names of CustomResourceDefinitions', () => {
  it('reports a conflict with an accepted name of the same group and serves nothing new', async () => {
    const api = await startServer()
    await installDefinition(api, cronTabDefinition())
    const rival = cronTabDefinition({ names: { plural: 'crontabs2', kind: 'CronTab2', shortNames: ['ct'] } })
    rival.metadata.name = 'crontabs2.stable.example.com'
    assert.equal((await api.post(CRDS, rival)).status, 201)
    await eventually('the conflict is reported', async () => {
      const got = (await api.get(`${CRDS}/crontabs2.stable.example.com`)).body
      const c = got.status?.conditions?.find((x: Condition) => x.type === 'NamesAccepted')
      return c?.status === 'False' && c.reason === 'ShortNamesConflict' && c.message === '"ct" is already in use'
    })
    assert.equal((await api.get('/apis/stable.example.com/v1/namespaces/default/crontabs2')).status, 404)
    // Once the holder of the name goes, the rival gets it and is served.
    await api.delete(`${CRDS}/crontabs.stable.example.com`)
    await eventually('the rival is accepted and served', async () => (await api.get('/apis/stable.example.com/v1/namespaces/default/crontabs2')).status === 200)
    const accepted = (await api.get(`${CRDS}/crontabs2.stable.example.com`)).body
    assert.deepEqual(accepted.status.acceptedNames.shortNames, ['ct'])
  })
})

describe('deleting a CustomResourceDefinition', () => {
  it('deletes every instance before the definition goes, and stops serving them', async () => {
    const api = await startServer()
    await installDefinition(api, cronTabDefinition())
    for (const name of ['a', 'b']) assert.equal((await api.post(CRONTABS, cronTab(name))).status, 201)
    const deleting = await api.delete(`${CRDS}/crontabs.stable.example.com`)
    assert.equal(deleting.status, 200, deleting.text)
    assert.ok(deleting.body.metadata.finalizers.includes('customresourcecleanup.apiextensions.k8s.io'))
    await eventually('the definition is gone', async () => (await api.get(`${CRDS}/crontabs.stable.example.com`)).status === 404)
    assert.equal((await api.get(CRONTABS)).status, 404)
    assert.equal((await api.get('/apis/stable.example.com')).status, 404)
    // Defined again, it starts empty.
    await installDefinition(api, cronTabDefinition())
    assert.deepEqual((await api.get(CRONTABS)).body.items, [])
  })

  it('waits for instances held by finalizers, refusing new ones meanwhile', async () => {
    const api = await startServer()
    await installDefinition(api, cronTabDefinition())
    const held = { ...cronTab('held'), metadata: { name: 'held', finalizers: ['example.com/hold'] } }
    assert.equal((await api.post(CRONTABS, held)).status, 201)
    await api.delete(`${CRDS}/crontabs.stable.example.com`)
    await eventually('the instance is marked for deletion', async () => (await api.get(`${CRONTABS}/held`)).body.metadata?.deletionTimestamp !== undefined)
    const refused = await api.post(CRONTABS, cronTab('late'))
    assert.equal(refused.status, 405, refused.text)
    assert.equal(refused.body.message, 'create not allowed while custom resource definition is terminating')
    const crd = (await api.get(`${CRDS}/crontabs.stable.example.com`)).body
    assert.equal(crd.status.conditions.find((c: Condition) => c.type === 'Terminating').status, 'True')
    await api.patch(`${CRONTABS}/held`, { metadata: { finalizers: null } }, 'application/merge-patch+json')
    await eventually('the definition is gone', async () => (await api.get(`${CRDS}/crontabs.stable.example.com`)).status === 404)
  })
})
