/** Every verb on the four core resources, through `fetch`, as a test author drives it. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MemoryStorage } from '../../core/index.js'
import { createTestServer, startServer, TestClient } from './harness.js'

const CM = '/api/v1/namespaces/default/configmaps'

describe('create and get', () => {
  it('creates a configmap with uid, creationTimestamp and resourceVersion, and reads it back', async () => {
    const api = await startServer()
    const created = await api.post(CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg' }, data: { a: 'b' } })
    assert.equal(created.status, 201)
    assert.equal(created.body.kind, 'ConfigMap')
    assert.equal(created.body.apiVersion, 'v1')
    assert.match(created.body.metadata.uid, /^[0-9a-f-]{36}$/)
    assert.match(created.body.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
    assert.match(created.body.metadata.resourceVersion, /^\d+$/)
    assert.equal(created.body.metadata.namespace, 'default')
    const got = await api.get(`${CM}/cfg`)
    assert.equal(got.status, 200)
    assert.deepEqual(got.body, created.body)
  })

  it('names an object from generateName', async () => {
    const api = await startServer()
    const created = await api.post(CM, { metadata: { generateName: 'job-' } })
    assert.equal(created.status, 201)
    assert.match(created.body.metadata.name, /^job-[bcdfghjklmnpqrstvwxz2456789]{5}$/)
  })

  it('creates namespaces Active with the kubernetes finalizer and the name label', async () => {
    const api = await startServer()
    const ns = await api.post('/api/v1/namespaces', { metadata: { name: 'team-a' } })
    assert.equal(ns.status, 201)
    assert.deepEqual(ns.body.spec, { finalizers: ['kubernetes'] })
    assert.deepEqual(ns.body.status, { phase: 'Active' })
    assert.equal(ns.body.metadata.labels['kubernetes.io/metadata.name'], 'team-a')
  })

  it('starts with the system namespaces', async () => {
    const api = await startServer()
    const list = await api.get('/api/v1/namespaces')
    assert.deepEqual(
      list.body.items.map((n: { metadata: { name: string } }) => n.metadata.name),
      ['default', 'kube-node-lease', 'kube-public', 'kube-system'],
    )
  })

  it('folds secret stringData into base64 data and defaults the type to Opaque', async () => {
    const api = await startServer()
    const s = await api.post('/api/v1/namespaces/default/secrets', { metadata: { name: 's' }, stringData: { k: 'vé' } })
    assert.equal(s.status, 201)
    assert.deepEqual(s.body.data, { k: 'dsOp' })
    assert.equal(s.body.type, 'Opaque')
    assert.equal(s.body.stringData, undefined)
  })

  it('creates service accounts', async () => {
    const api = await startServer()
    const sa = await api.post('/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'builder' } })
    assert.equal(sa.status, 201)
    assert.equal((await api.get('/api/v1/namespaces/default/serviceaccounts/builder')).body.metadata.name, 'builder')
  })

  it('accepts YAML bodies and answers in YAML when asked', async () => {
    const api = await startServer()
    const yaml = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  k: v\n'
    const created = await api.call('POST', CM, { body: yaml, headers: { 'content-type': 'application/yaml' } })
    assert.equal(created.status, 201)
    const got = await api.get(`${CM}/from-yaml`, { headers: { accept: 'application/yaml' } })
    assert.equal(got.headers.get('content-type'), 'application/yaml')
    // Upstream's YAML: every map's keys sorted, timestamps quoted (YAML 1.1), FieldsV1's `.` plain; written without a User-Agent, under `unknown`.
    const meta = created.body.metadata as { uid: string; resourceVersion: string; creationTimestamp: string }
    assert.equal(
      got.text,
      `apiVersion: v1\ndata:\n  k: v\nkind: ConfigMap\nmetadata:\n  creationTimestamp: "${meta.creationTimestamp}"\n` +
        `  managedFields:\n  - apiVersion: v1\n    fieldsType: FieldsV1\n    fieldsV1:\n      f:data:\n        .: {}\n        f:k: {}\n` +
        `    manager: unknown\n    operation: Update\n    time: "${meta.creationTimestamp}"\n` +
        `  name: from-yaml\n  namespace: default\n  resourceVersion: "${meta.resourceVersion}"\n  uid: ${meta.uid}\n`,
    )
  })

  it("answers YAML from the JSON form, with Go's empty values (the event's source and unset times)", async () => {
    const api = await startServer()
    const event = { metadata: { name: 'e1' }, involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' }, reason: 'Started' }
    assert.equal((await api.post('/api/v1/namespaces/default/events', event)).status, 201)
    const got = await api.get('/api/v1/namespaces/default/events/e1', { headers: { accept: 'application/yaml' } })
    assert.match(got.text, /\neventTime: null\nfirstTimestamp: null\ninvolvedObject:\n/)
    assert.match(got.text, /\nreportingComponent: ""\nreportingInstance: ""\nsource: \{\}\n/)
  })
})

describe('list', () => {
  async function withThree() {
    const api = await startServer()
    for (const [name, tier] of [
      ['a', 'web'],
      ['b', 'db'],
      ['c', 'web'],
    ] as const)
      await api.post(CM, { metadata: { name, labels: { tier } } })
    return api
  }
  const names = (body: { items: { metadata: { name: string } }[] }) => body.items.map((i) => i.metadata.name)

  it('lists in name order with the collection resourceVersion', async () => {
    const api = await withThree()
    const list = await api.get(CM)
    assert.equal(list.body.kind, 'ConfigMapList')
    assert.deepEqual(names(list.body), ['a', 'b', 'c'])
    assert.match(list.body.metadata.resourceVersion, /^\d+$/)
  })

  it('filters by label and field selectors', async () => {
    const api = await withThree()
    assert.deepEqual(names((await api.get(`${CM}?labelSelector=tier%3Dweb`)).body), ['a', 'c'])
    assert.deepEqual(names((await api.get(`${CM}?labelSelector=tier%20notin%20(web)`)).body), ['b'])
    assert.deepEqual(names((await api.get(`${CM}?fieldSelector=metadata.name%3Dc`)).body), ['c'])
  })

  it('refuses an unknown field selector with 400, in the words of the kind\u2019s field label conversion', async () => {
    const api = await withThree()
    const r = await api.get(`${CM}?fieldSelector=spec.foo%3Dx`)
    assert.equal(r.status, 400)
    assert.equal(r.body.message, '"spec.foo" is not a known field selector: only "metadata.name", "metadata.namespace"')
    // Kinds converting their own labels word it otherwise.
    assert.equal((await api.get('/api/v1/pods?fieldSelector=spec.foo%3Dx')).body.message, 'field label not supported: spec.foo')
    assert.equal((await api.get('/apis/batch/v1/jobs?fieldSelector=spec.foo%3Dx')).body.message, 'field label "spec.foo" not supported for batchv1.Job')
  })

  it('selects on metadata.namespace for a cluster-scoped kind with the default conversion, and not for one with its own', async () => {
    const api = await withThree()
    await api.post('/apis/scheduling.k8s.io/v1/priorityclasses', { metadata: { name: 'low' }, value: 10 })
    const pcNames = async (selector: string) => names((await api.get(`/apis/scheduling.k8s.io/v1/priorityclasses?fieldSelector=${encodeURIComponent(selector)}`)).body)
    assert.ok((await pcNames('metadata.namespace=')).includes('low'))
    assert.deepEqual(await pcNames('metadata.namespace=default'), [])
    const nodes = await api.get('/api/v1/nodes?fieldSelector=metadata.namespace%3D')
    assert.equal(nodes.status, 400)
    assert.equal(nodes.body.message, 'field label not supported: metadata.namespace')
  })

  it('refuses a malformed label selector with 400', async () => {
    const api = await withThree()
    assert.equal((await api.get(`${CM}?labelSelector=tier%20in%20web`)).status, 400)
  })

  it('pages with limit and continue, with the first page\u2019s resourceVersion throughout', async () => {
    const api = await withThree()
    const first = await api.get(`${CM}?limit=2`)
    assert.deepEqual(names(first.body), ['a', 'b'])
    assert.equal(first.body.metadata.remainingItemCount, 1)
    assert.ok(first.body.metadata.continue)
    await api.post(CM, { metadata: { name: 'd' } })
    const second = await api.get(`${CM}?limit=2&continue=${encodeURIComponent(first.body.metadata.continue)}`)
    assert.deepEqual(names(second.body), ['c'])
    assert.equal(second.body.metadata.continue, undefined)
    assert.equal(second.body.metadata.resourceVersion, first.body.metadata.resourceVersion)
  })

  it('refuses a continue token that cannot be read with 400', async () => {
    const api = await withThree()
    const r = await api.get(`${CM}?limit=1&continue=garbage`)
    assert.equal(r.status, 400)
    assert.match(r.body.message, /^invalid continue token/)
  })

  it("refuses a continue token Go's decoder would not read, in its words: a revision written 1e1, a string, past int64, a token not an object", async () => {
    const api = await withThree()
    const token = (json: string) => encodeURIComponent(Buffer.from(json).toString('base64url'))
    const cases: [string, string][] = [
      ['{"v":"meta.k8s.io/v1","rv":1e1,"start":"b"}', 'json: cannot unmarshal number 1e1 into Go struct field continueToken.rv of type int64'],
      ['{"v":"meta.k8s.io/v1","rv":2.0,"start":"b"}', 'json: cannot unmarshal number 2.0 into Go struct field continueToken.rv of type int64'],
      ['{"v":"meta.k8s.io/v1","rv":"2","start":"b"}', 'json: cannot unmarshal string into Go struct field continueToken.rv of type int64'],
      ['{"v":"meta.k8s.io/v1","rv":9223372036854775808,"start":"b"}', 'json: cannot unmarshal number 9223372036854775808 into Go struct field continueToken.rv of type int64'],
      ['{"v":["meta.k8s.io/v1"],"rv":true,"start":"b"}', 'json: cannot unmarshal array into Go struct field continueToken.v of type string'],
      ['[{"v":"meta.k8s.io/v1"}]', 'json: cannot unmarshal array into Go value of type storage.continueToken'],
      ['{"v":"meta.k8s.io/v1","rv":2,', 'unexpected end of JSON input'],
    ]
    for (const [json, words] of cases) {
      const r = await api.get(`${CM}?limit=1&continue=${token(json)}`)
      assert.equal(r.status, 400, json)
      assert.equal(r.body.message, `invalid continue token: continue key is not valid: ${words}`, json)
    }
    // Go matches a key to its field regardless of case: such a token continues the list.
    const first = await api.get(`${CM}?limit=1`)
    const { rv, start } = JSON.parse(Buffer.from(first.body.metadata.continue, 'base64url').toString()) as { rv: number; start: string }
    const rest = await api.get(`${CM}?continue=${token(JSON.stringify({ V: 'meta.k8s.io/v1', RV: rv, Start: start }))}`)
    assert.equal(rest.status, 200, rest.text)
    assert.deepEqual(names(rest.body), names((await api.get(CM)).body).slice(1))
  })

  it('answers an expired continue token with 410 Expired and a token for the rest at the latest revision', async () => {
    const server = createTestServer({}, { storage: new MemoryStorage({ historyLimit: 5 }) })
    await server.ready
    const api = new TestClient(server)
    for (const name of ['a', 'b', 'c']) await api.post(CM, { metadata: { name } })
    const first = await api.get(`${CM}?limit=1`)
    for (let i = 0; i < 10; i++) await api.post(CM, { metadata: { name: `z${i}` } })
    const expired = await api.get(`${CM}?limit=1&continue=${encodeURIComponent(first.body.metadata.continue)}`)
    assert.equal(expired.status, 410)
    assert.equal(expired.body.reason, 'Expired')
    assert.match(expired.body.message, /^The provided continue parameter is too old/)
    const rest = await api.get(`${CM}?continue=${encodeURIComponent(expired.body.metadata.continue)}`)
    assert.equal(rest.status, 200)
    assert.deepEqual(names(rest.body).slice(0, 2), ['b', 'c'])
  })

  it('lists across namespaces', async () => {
    const api = await withThree()
    await api.post('/api/v1/namespaces', { metadata: { name: 'other' } })
    await api.post('/api/v1/namespaces/other/configmaps', { metadata: { name: 'z' } })
    // Beside kube-system's own (the legacy token tracking ConfigMap the server keeps there).
    assert.deepEqual(names((await api.get('/api/v1/configmaps?fieldSelector=metadata.namespace!%3Dkube-system')).body), ['a', 'b', 'c', 'z'])
  })

  it('answers a Table with NAME, DATA, AGE and row metadata when kubectl asks for one', async () => {
    const api = await startServer()
    await api.post(CM, { metadata: { name: 'cfg', labels: { x: 'y' } }, data: { a: '1', b: '2' } })
    const table = await api.get(CM, {
      headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json' },
    })
    assert.equal(table.body.kind, 'Table')
    assert.deepEqual(
      table.body.columnDefinitions.map((c: { name: string }) => c.name),
      ['Name', 'Data', 'Age'],
    )
    assert.equal(table.body.rows[0].cells[0], 'cfg')
    assert.equal(table.body.rows[0].cells[1], 2)
    assert.match(table.body.rows[0].cells[2], /^\d+s$/)
    assert.equal(table.body.rows[0].object.kind, 'PartialObjectMetadata')
    assert.deepEqual(table.body.rows[0].object.metadata.labels, { x: 'y' })
  })

  it("answers a write asked for as a Table with the written object's row, as upstream converts any answer", async () => {
    const api = await startServer()
    const asTable = { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' }
    const created = await api.post(CM, { metadata: { name: 'cfg' }, data: { a: '1' } }, { headers: asTable })
    assert.equal(created.status, 201, created.text)
    assert.equal(created.body.kind, 'Table')
    assert.deepEqual(created.body.rows.map((r: { cells: unknown[] }) => r.cells.slice(0, 2)), [['cfg', 1]])
    const patched = await api.patch(`${CM}/cfg`, '{"data":{"b":"2"}}', 'application/merge-patch+json', { headers: asTable })
    assert.deepEqual(patched.body.rows.map((r: { cells: unknown[] }) => r.cells.slice(0, 2)), [['cfg', 2]])
    // A review has no table: asked for one alone, upstream answers 406 (a conformance spec).
    const review = await api.post('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { spec: { nonResourceAttributes: { path: '/', verb: 'get' } } }, { headers: asTable })
    assert.equal(review.status, 406, review.text)
    const removed = await api.call('DELETE', CM, { headers: asTable })
    assert.equal(removed.body.kind, 'Table')
    assert.deepEqual(removed.body.rows.map((r: { cells: unknown[] }) => r.cells[0]), ['cfg'])
  })
})

describe('update and patch', () => {
  it('replaces with the current resourceVersion and refuses a stale one with 409, keeping the stored object', async () => {
    const api = await startServer()
    const created = await api.post(CM, { metadata: { name: 'cfg' }, data: { v: '1' } })
    const updated = await api.put(`${CM}/cfg`, { ...created.body, data: { v: '2' } })
    assert.equal(updated.status, 200)
    assert.notEqual(updated.body.metadata.resourceVersion, created.body.metadata.resourceVersion)
    assert.equal(updated.body.metadata.uid, created.body.metadata.uid)
    const stale = await api.put(`${CM}/cfg`, { ...created.body, data: { v: '3' } })
    assert.equal(stale.status, 409)
    assert.equal(stale.body.reason, 'Conflict')
    assert.equal((await api.get(`${CM}/cfg`)).body.data.v, '2')
  })

  it('keeps uid and creationTimestamp when a replace omits them', async () => {
    const api = await startServer()
    const created = await api.post(CM, { metadata: { name: 'cfg' } })
    const updated = await api.put(`${CM}/cfg`, { metadata: { name: 'cfg' }, data: { a: 'b' } })
    assert.equal(updated.status, 200)
    assert.equal(updated.body.metadata.uid, created.body.metadata.uid)
    assert.equal(updated.body.metadata.creationTimestamp, created.body.metadata.creationTimestamp)
  })

  it('refuses to replace an object that does not exist with 404', async () => {
    const api = await startServer()
    const r = await api.put(`${CM}/nope`, { metadata: { name: 'nope' } })
    assert.equal(r.status, 404)
    assert.equal(r.body.message, 'configmaps "nope" not found')
  })

  it('applies merge patches (kubectl label) and JSON patches', async () => {
    const api = await startServer()
    await api.post(CM, { metadata: { name: 'cfg' }, data: { a: '1' } })
    const labelled = await api.patch(`${CM}/cfg?fieldManager=kubectl-label`, { metadata: { labels: { env: 'prod' } } }, 'application/merge-patch+json')
    assert.equal(labelled.status, 200)
    assert.deepEqual(labelled.body.metadata.labels, { env: 'prod' })
    const patched = await api.patch(
      `${CM}/cfg`,
      [
        { op: 'test', path: '/data/a', value: '1' },
        { op: 'replace', path: '/data/a', value: '2' },
      ],
      'application/json-patch+json',
    )
    assert.equal(patched.status, 200)
    assert.deepEqual(patched.body.data, { a: '2' })
  })

  it('refuses a JSON patch whose test fails with 422 and changes nothing', async () => {
    const api = await startServer()
    const created = await api.post(CM, { metadata: { name: 'cfg' }, data: { a: '1' } })
    const r = await api.patch(`${CM}/cfg`, [{ op: 'test', path: '/data/a', value: 'x' }, { op: 'remove', path: '/data' }], 'application/json-patch+json')
    assert.equal(r.status, 422)
    assert.deepEqual((await api.get(`${CM}/cfg`)).body, created.body)
  })

  it('refuses a patch that carries a stale resourceVersion with 409', async () => {
    const api = await startServer()
    await api.post(CM, { metadata: { name: 'cfg' } })
    const r = await api.patch(`${CM}/cfg`, { metadata: { resourceVersion: '1' }, data: { a: 'b' } }, 'application/merge-patch+json')
    assert.equal(r.status, 409)
    assert.equal((await api.get(`${CM}/cfg`)).body.data, undefined)
  })

  it('refuses a patch type it does not support with 415', async () => {
    const api = await startServer()
    await api.post(CM, { metadata: { name: 'cfg' } })
    const r = await api.patch(`${CM}/cfg`, { data: { a: 'b' } }, 'text/plain')
    assert.equal(r.status, 415)
    assert.equal(r.body.reason, 'UnsupportedMediaType')
  })

  it('keeps a secret\u2019s data while it is immutable', async () => {
    const api = await startServer()
    await api.post('/api/v1/namespaces/default/secrets', { metadata: { name: 's' }, immutable: true, data: { a: 'Yg==' } })
    const r = await api.patch('/api/v1/namespaces/default/secrets/s', { data: { a: 'Yw==' } }, 'application/merge-patch+json')
    assert.equal(r.status, 422)
    assert.match(r.body.message, /data: Forbidden: field is immutable when `immutable` is set/)
  })
})

describe('delete', () => {
  it('deletes a configmap and answers with a Success Status naming it', async () => {
    const api = await startServer()
    const created = await api.post(CM, { metadata: { name: 'cfg' } })
    const r = await api.call('DELETE', `${CM}/cfg`, { body: { propagationPolicy: 'Background' } })
    assert.equal(r.status, 200)
    assert.deepEqual(r.body, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: { name: 'cfg', kind: 'configmaps', uid: created.body.metadata.uid },
    })
    assert.equal((await api.get(`${CM}/cfg`)).status, 404)
  })

  it('refuses a delete whose uid precondition does not match with 409 and keeps the object', async () => {
    const api = await startServer()
    await api.post(CM, { metadata: { name: 'cfg' } })
    const r = await api.call('DELETE', `${CM}/cfg`, { body: { preconditions: { uid: 'other' } } })
    assert.equal(r.status, 409)
    assert.equal((await api.get(`${CM}/cfg`)).status, 200)
  })

  it('keeps an object with finalizers, marked for deletion, until they are removed', async () => {
    const api = await startServer()
    await api.post(CM, { metadata: { name: 'cfg', finalizers: ['example.com/hold'] } })
    const r = await api.delete(`${CM}/cfg`)
    assert.equal(r.status, 200)
    assert.ok(r.body.metadata.deletionTimestamp)
    assert.equal((await api.get(`${CM}/cfg`)).status, 200)
    const released = await api.patch(`${CM}/cfg`, { metadata: { finalizers: null } }, 'application/merge-patch+json')
    assert.equal(released.status, 200)
    assert.equal((await api.get(`${CM}/cfg`)).status, 404)
  })

  it('deletes a collection by label selector and returns what it deleted', async () => {
    const api = await startServer()
    await api.post(CM, { metadata: { name: 'a', labels: { app: 'web' } } })
    await api.post(CM, { metadata: { name: 'b', labels: { app: 'db' } } })
    const r = await api.delete(`${CM}?labelSelector=app%3Dweb`)
    assert.equal(r.status, 200)
    assert.deepEqual(
      r.body.items.map((i: { metadata: { name: string } }) => i.metadata.name),
      ['a'],
    )
    assert.deepEqual(
      (await api.get(CM)).body.items.map((i: { metadata: { name: string } }) => i.metadata.name),
      ['b'],
    )
  })

  it('deletes a namespace: Terminating first, then emptied and gone', async () => {
    const api = await startServer()
    await api.post('/api/v1/namespaces', { metadata: { name: 'team' } })
    await api.post('/api/v1/namespaces/team/configmaps', { metadata: { name: 'cfg' } })
    const r = await api.delete('/api/v1/namespaces/team')
    assert.equal(r.status, 200)
    assert.equal(r.body.status.phase, 'Terminating')
    for (let i = 0; i < 100 && (await api.get('/api/v1/namespaces/team')).status !== 404; i++)
      await new Promise((resolve) => setTimeout(resolve, 10))
    assert.equal((await api.get('/api/v1/namespaces/team')).status, 404)
    assert.equal((await api.get('/api/v1/namespaces/team/configmaps/cfg')).status, 404)
  })

  it('dry-run deletes nothing', async () => {
    const api = await startServer()
    await api.post(CM, { metadata: { name: 'cfg' } })
    assert.equal((await api.delete(`${CM}/cfg?dryRun=All`)).status, 200)
    assert.equal((await api.get(`${CM}/cfg`)).status, 200)
  })
})

describe('names a client escapes in the URL', () => {
  it('reads, replaces and deletes an object whose name has spaces, non-ASCII or ? and #, through the escaped name clients send, as upstream decodes the path', async () => {
    const api = await startServer()
    const CR = '/apis/rbac.authorization.k8s.io/v1/clusterroles'
    for (const name of ['read all', 'café', 'a?b', 'a#b']) {
      assert.equal((await api.post(CR, { metadata: { name }, rules: [] })).status, 201, name)
      // As client-go's url.URL and kubectl send it: each such character percent-escaped.
      const path = `${CR}/${encodeURIComponent(name)}`
      const got = await api.get(path)
      assert.equal(got.status, 200, `${name}: ${got.text}`)
      assert.equal(got.body.metadata.name, name)
      const replaced = await api.put(path, { ...got.body, metadata: { ...got.body.metadata, labels: { changed: 'yes' } } })
      assert.equal(replaced.status, 200, `${name}: ${replaced.text}`)
      assert.equal(replaced.body.metadata.labels.changed, 'yes')
      assert.equal((await api.delete(path)).status, 200, name)
      assert.equal((await api.get(path)).status, 404, name)
    }
  })

  it('reads an escaped half of a surrogate pair as U+FFFD, as Go\u2019s decoder does, so two such names are one object in every store', async () => {
    const api = await startServer()
    const CR = '/apis/rbac.authorization.k8s.io/v1/clusterroles'
    // Written as JSON text: JSON.stringify would escape the halves itself.
    const created = await api.post(CR, '{"metadata":{"name":"x\\ud800"},"rules":[]}')
    assert.equal(created.status, 201, created.text)
    assert.equal(created.body.metadata.name, 'x\ufffd')
    const again = await api.post(CR, '{"metadata":{"name":"x\\udc00"},"rules":[]}')
    assert.equal(again.status, 409, again.text)
    assert.equal(again.body.reason, 'AlreadyExists')
    assert.equal(again.body.message, 'clusterroles.rbac.authorization.k8s.io "x\ufffd" already exists')
    const got = await api.get(`${CR}/${encodeURIComponent('x\ufffd')}`)
    assert.equal(got.status, 200, got.text)
    assert.equal(got.body.metadata.uid, created.body.metadata.uid)
    const paired = await api.post(CR, '{"metadata":{"name":"x\\ud83d\\ude00"},"rules":[]}')
    assert.equal(paired.body.metadata.name, 'x\u{1F600}', 'a whole pair is kept')
  })

  it('splits an escaped slash as a separator, as upstream does, and answers a malformed escape as Go’s server does', async () => {
    const api = await startServer()
    await api.post(CM, { metadata: { name: 'a' } })
    const slash = await api.get(`${CM}/a%2Fstatus`)
    assert.equal(slash.status, 404, slash.text)
    assert.equal(slash.body.reason, 'NotFound')
    const malformed = await api.get(`${CM}/a%zz`)
    assert.equal(malformed.status, 400, malformed.text)
    assert.equal(malformed.text, '400 Bad Request')
    const percent = await api.get(`${CM}/a%25b`)
    assert.equal(percent.status, 400, percent.text)
    assert.equal(percent.body.message, `Name parameter invalid: "a%b": may not contain '%'`)
  })
})
