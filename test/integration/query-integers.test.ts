/** The integer query parameters of list, watch and deletecollection, read as upstream's query conversion reads them. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { startServer, type Reply, type TestClient } from './harness.js'

const CM = '/api/v1/namespaces/default/configmaps'

/** A Status of `code` and `reason` saying `message`, with the configmaps as they were. */
async function refused(api: TestClient, request: () => Promise<Reply>, code: number, reason: string, message: string): Promise<void> {
  const before = await api.get(CM)
  const r = await request()
  assert.equal(r.status, code, r.text)
  assert.deepEqual(
    { kind: r.body.kind, status: r.body.status, reason: r.body.reason, code: r.body.code, message: r.body.message },
    { kind: 'Status', status: 'Failure', reason, code, message },
  )
  assert.deepEqual((await api.get(CM)).body, before.body, 'the store changed')
}

describe('integer query parameters', () => {
  it('refuses a limit or timeoutSeconds that is no int64 with 400 in strconv.ParseInt words, before the selectors', async () => {
    const api = await startServer()
    for (const [query, message] of [
      ['limit=99999999999999999999', 'strconv.ParseInt: parsing "99999999999999999999": value out of range'],
      ['limit=-9223372036854775809', 'strconv.ParseInt: parsing "-9223372036854775809": value out of range'],
      ['timeoutSeconds=99999999999999999999', 'strconv.ParseInt: parsing "99999999999999999999": value out of range'],
      ['watch=1&timeoutSeconds=9223372036854775808', 'strconv.ParseInt: parsing "9223372036854775808": value out of range'],
      ['limit=abc', 'strconv.ParseInt: parsing "abc": invalid syntax'],
      ['limit=1.5', 'strconv.ParseInt: parsing "1.5": invalid syntax'],
      ['limit=', 'strconv.ParseInt: parsing "": invalid syntax'],
      ['limit=+5', 'strconv.ParseInt: parsing " 5": invalid syntax'],
      ['timeoutSeconds=ten&limit=x', 'strconv.ParseInt: parsing "ten": invalid syntax'],
      ['limit=x&labelSelector=a%20in', 'strconv.ParseInt: parsing "x": invalid syntax'],
    ] as const) {
      await refused(api, () => api.get(`${CM}?${query}`), 400, 'BadRequest', message)
      await refused(api, () => api.delete(`${CM}?${query}`), 400, 'BadRequest', message)
    }
  })

  it('takes the int64 values upstream takes: a negative limit lists everything, a negative timeoutSeconds ends the watch at once', async () => {
    const api = await startServer()
    for (const name of ['a', 'b']) assert.equal((await api.post(CM, { metadata: { name } })).status, 201)
    for (const limit of ['-1', '%2B1', '9223372036854775807', '0']) {
      const list = await api.get(`${CM}?limit=${limit}`)
      assert.equal(list.status, 200, list.text)
      assert.deepEqual(list.body.items.map((i: { metadata: { name: string } }) => i.metadata.name), limit === '%2B1' ? ['a'] : ['a', 'b'])
    }
    const watch = await api.get(`${CM}?watch=1&resourceVersion=0&timeoutSeconds=-1`)
    assert.equal(watch.status, 200)
    assert.equal(watch.text, '')
  })
})
