/**
 * Upstream's router checks a built-in resource's request before its handler
 * runs: a PATCH whose Content-Type is no patch type is `415: Unsupported
 * Media Type`, an Accept header naming none of the route's types (compared
 * as written, parameters cut off) is `406: Not Acceptable` with the types
 * the route has. Custom resources have no such routes: their handler
 * negotiates alone. Accept ranges are tried in goautoneg's order (by q, a
 * named type before a wildcard) and a range of q=0 is still tried.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { parse } from 'yaml'
import { cronTab, cronTabDefinition, installDefinition } from './crd-fixtures.js'
import { startServer, type TestClient } from './harness.js'

const CONFIGMAPS = '/api/v1/namespaces/default/configmaps'
const CRONTABS = '/apis/stable.example.com/v1/namespaces/default/crontabs'
const OBJECT_TYPES = 'application/json, application/yaml, application/vnd.kubernetes.protobuf'
const LIST_TYPES = `${OBJECT_TYPES}, application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch`

describe("a built-in resource's routes", () => {
  let api: TestClient
  before(async () => {
    api = await startServer()
    assert.equal((await api.post(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kept' }, data: { a: '1' } })).status, 201)
  })

  const patchAs = (type: string) => api.call('PATCH', `${CONFIGMAPS}/kept`, { body: '{"data":{"a":"2"}}', headers: { 'content-type': type } })

  it('refuse a PATCH of any other Content-Type with the router\'s 415, and change nothing', async () => {
    for (const type of ['text/plain', 'application/json', 'Application/Merge-Patch+JSON', 'application/*']) {
      const res = await patchAs(type)
      assert.equal(res.status, 415, `${type}: ${res.text}`)
      assert.deepEqual(res.body, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: '415: Unsupported Media Type', reason: 'UnsupportedMediaType', details: {}, code: 415 })
    }
    // An empty Content-Type is read as application/octet-stream.
    assert.equal((await patchAs('')).status, 415)
    assert.equal((await api.get(`${CONFIGMAPS}/kept`)).body.data.a, '1')
  })

  it('take a patch type with parameters; one listed among others passes the router, not the handler', async () => {
    assert.equal((await patchAs('application/merge-patch+json; charset=utf-8')).status, 200)
    assert.equal((await api.get(`${CONFIGMAPS}/kept`)).body.data.a, '2')
    // The router reads each type of the list; the patch handler, as upstream's, the whole header as one.
    const listed = await patchAs('text/plain, application/merge-patch+json')
    assert.equal(listed.status, 415)
    assert.match(listed.body.message, /^the body of the request was in an unknown format - accepted media types include: application\/json-patch\+json/)
  })

  it("refuse an Accept header none of the route's types matches with the router's 406", async () => {
    for (const accept of ['text/html', 'application/*', 'APPLICATION/JSON', 'garbage']) {
      const one = await api.get(`${CONFIGMAPS}/kept`, { headers: { accept } })
      assert.equal(one.status, 406, `${accept}: ${one.text}`)
      assert.equal(one.body.reason, 'NotAcceptable')
      assert.equal(one.body.message, `406: Not Acceptable\n\nAvailable representations: ${OBJECT_TYPES}`)
      // A list's route also produces the watch streams.
      const list = await api.get(CONFIGMAPS, { headers: { accept } })
      assert.equal(list.body.message, `406: Not Acceptable\n\nAvailable representations: ${LIST_TYPES}`)
    }
  })

  it('refuse a create whose answer no type of Accept can carry, storing nothing', async () => {
    const res = await api.post(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'refused' } }, { headers: { accept: 'text/html' } })
    assert.equal(res.status, 406, res.text)
    assert.equal((await api.get(`${CONFIGMAPS}/refused`)).status, 404)
  })

  it('answer an empty Accept, */*, and a type of q=0, as upstream tries every range', async () => {
    for (const accept of ['', '*/*', 'application/json;q=0']) {
      const res = await api.get(`${CONFIGMAPS}/kept`, { headers: { accept } })
      assert.equal(res.status, 200, `${accept}: ${res.text}`)
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/)
    }
  })

  it('refuse a watch in YAML, which has no stream form, naming the stream types', async () => {
    const res = await api.get(`${CONFIGMAPS}?watch=1&timeoutSeconds=1`, { headers: { accept: 'application/yaml' } })
    assert.equal(res.status, 406, res.text)
    // The refusal itself in YAML, as upstream negotiates an error's encoding.
    assert.equal(res.headers.get('content-type'), 'application/yaml')
    assert.equal(parse(res.text).message, 'only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch')
  })

  it('try a named type before a wildcard of the same q, as goautoneg orders them', async () => {
    const res = await api.get(`${CONFIGMAPS}/kept`, { headers: { accept: '*/*, application/yaml' } })
    assert.equal(res.status, 200)
    assert.match(res.headers.get('content-type') ?? '', /^application\/yaml/)
  })
})

describe("a custom resource's handler", () => {
  let api: TestClient
  before(async () => {
    api = await startServer()
    await installDefinition(api, cronTabDefinition())
    assert.equal((await api.post(CRONTABS, cronTab('mine'))).status, 201)
  })

  it('negotiates alone: a wildcard subtype is answered in JSON', async () => {
    const res = await api.get(`${CRONTABS}/mine`, { headers: { accept: 'application/*' } })
    assert.equal(res.status, 200, res.text)
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/)
  })

  it('refuses a PATCH of another type naming the patch types it takes', async () => {
    const res = await api.patch(`${CRONTABS}/mine`, '{}', 'text/plain')
    assert.equal(res.status, 415)
    assert.match(res.body.message, /accepted media types include: application\/json-patch\+json, application\/merge-patch\+json/)
  })
})
