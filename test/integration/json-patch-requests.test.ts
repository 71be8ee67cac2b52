/**
 * JSON patches through PATCH, answered as upstream answers them: its patch
 * library's rules (json-patch v4) decide what applies, a patch that does
 * not apply gets one generic 422 whatever failed, and a document that is
 * no list of operations gets 400 in the decoder's words. Merge and
 * strategic merge patches that are no object likewise.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { startServer, type TestClient } from './harness.js'

const CM = '/api/v1/namespaces/default/configmaps'
const JSON_PATCH = 'application/json-patch+json'

describe('JSON patch requests', () => {
  let api: TestClient
  let stored: { metadata: { resourceVersion: string }; data: Record<string, string> }
  before(async () => {
    api = await startServer()
    stored = (await api.post(CM, { metadata: { name: 'cfg' }, data: { a: '1' } })).body
  })

  const patch = (body: unknown, query = '') => api.call('PATCH', `${CM}/cfg${query}`, { body, headers: { 'content-type': JSON_PATCH } })

  it('answers every operation that does not apply with the one 422 upstream gives, and stores nothing', async () => {
    for (const ops of [
      [{ op: 'test', path: '/data/a', value: 'x' }, { op: 'remove', path: '/data' }],
      [{ op: 'remove', path: '/data/nope' }],
      [{ op: 'add', path: '/nope/x', value: 'y' }],
      [{ op: 'jump', path: '/data/a' }],
      [{ op: 'add', value: 'no path' }],
      [{ op: 'move', from: '/data/nope', path: '/data/b' }],
      [{ op: 'add', path: '/metadata/finalizers/7', value: 'x' }],
    ]) {
      const res = await patch(ops)
      assert.equal(res.status, 422, JSON.stringify(ops))
      assert.deepEqual(res.body, {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'the server rejected our request due to an error in our request',
        reason: 'Invalid',
        details: {},
        code: 422,
      })
    }
    const now = (await api.get(`${CM}/cfg`)).body
    assert.equal(now.metadata.resourceVersion, stored.metadata.resourceVersion, 'nothing was written')
    assert.deepEqual(now.data, { a: '1' })
  })

  it('refuses a document that is no list of operations with 400, as the field validation asked for decodes it', async () => {
    const refusals: [unknown, string, string][] = [
      [{ op: 'add' }, '', 'error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp'],
      [[{ op: 1, path: '/data/a' }], '', 'error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.op of type string'],
      [['add'], '?fieldValidation=Strict', 'error decoding patch: json: cannot unmarshal string into Go value of type handlers.jsonPatchOp'],
      [{ op: 'add' }, '?fieldValidation=Ignore', 'json: cannot unmarshal object into Go value of type jsonpatch.Patch'],
      [['add'], '?fieldValidation=Ignore', 'json: cannot unmarshal string into Go value of type jsonpatch.Operation'],
    ]
    for (const [body, query, message] of refusals) {
      const res = await patch(body, query)
      assert.equal(res.status, 400, JSON.stringify(body))
      assert.equal(res.body.reason, 'BadRequest')
      assert.equal(res.body.message, message)
    }
    assert.equal((await api.get(`${CM}/cfg`)).body.metadata.resourceVersion, stored.metadata.resourceVersion)
  })

  it('applies what upstream applies: a replace of a missing key adds it, a null patch changes nothing', async () => {
    const none = await patch(null)
    assert.equal(none.status, 200, none.text)
    assert.equal(none.body.metadata.resourceVersion, stored.metadata.resourceVersion, 'no change, no write')
    const replaced = await patch([{ op: 'replace', path: '/metadata/labels', value: { app: 'web' } }, { op: 'replace', path: '/data/b', value: '2' }])
    assert.equal(replaced.status, 200, replaced.text)
    assert.deepEqual(replaced.body.metadata.labels, { app: 'web' })
    assert.deepEqual(replaced.body.data, { a: '1', b: '2' })
    const appended = await patch([{ op: 'add', path: '/metadata/finalizers', value: ['example.com/a'] }, { op: 'add', path: '/metadata/finalizers/-1', value: 'example.com/b' }])
    assert.deepEqual(appended.body.metadata.finalizers, ['example.com/a', 'example.com/b'])
    const removed = await patch([{ op: 'remove', path: '/metadata/finalizers' }])
    assert.equal(removed.body.metadata.finalizers, undefined)
  })

  it('refuses merge and strategic merge patches that are no object in the words each decoding gives', async () => {
    const send = (type: string, body: string, query = '') => api.call('PATCH', `${CM}/cfg${query}`, { body, headers: { 'content-type': `application/${type}+json` } })
    const refusals: [string, string, string, string][] = [
      ['merge-patch', 'null', '', 'Invalid JSON Patch'],
      ['merge-patch', '[]', '', 'error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}'],
      ['merge-patch', '"text"', '?fieldValidation=Strict', 'error decoding patch: json: cannot unmarshal string into Go value of type map[string]interface {}'],
      ['merge-patch', 'not json', '', "error decoding patch: invalid character 'o' in literal null (expecting 'u')"],
      ['merge-patch', 'not json', '?fieldValidation=Ignore', 'Invalid JSON Patch'],
      ['merge-patch', '7', '?fieldValidation=Ignore', 'Invalid JSON Patch'],
      ['strategic-merge-patch', '[]', '', 'json: cannot unmarshal array into Go value of type map[string]interface {}'],
      ['strategic-merge-patch', 'true', '?fieldValidation=Ignore', 'json: cannot unmarshal bool into Go value of type map[string]interface {}'],
      ['strategic-merge-patch', 'not json', '', "invalid character 'o' in literal null (expecting 'u')"],
      ['strategic-merge-patch', '', '', 'unexpected end of JSON input'],
    ]
    for (const [type, body, query, message] of refusals) {
      const res = await send(type, body, query)
      assert.equal(res.status, 400, `${type} ${body}: ${res.text}`)
      assert.equal(res.body.message, message, `${type} ${body}`)
    }
    // A strategic merge patch of null is no change.
    const before = (await api.get(`${CM}/cfg`)).body
    const none = await send('strategic-merge-patch', 'null')
    assert.equal(none.status, 200, none.text)
    assert.equal(none.body.metadata.resourceVersion, before.metadata.resourceVersion)
  })
})
