/** resourceVersions past 2^53, which JavaScript numbers cannot hold exactly, read as upstream reads a uint64. */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { startServer, type TestClient } from './harness.js'

const CM = '/api/v1/namespaces/default/configmaps'
const TOO_LARGE_CAUSES = [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }]

describe('resourceVersion past 2^53', () => {
  let api: TestClient
  let current: string
  before(async () => {
    api = await startServer()
    const created = await api.post(CM, { metadata: { name: 'cfg' } })
    assert.equal(created.status, 201)
    current = (await api.get(CM)).body.metadata.resourceVersion
  })

  for (const rv of ['9007199254740993', '9223372036854775808', '18446744073709551615']) {
    for (const [verb, path] of [['get', `${CM}/cfg`], ['list', CM], ['exact list', `${CM}?resourceVersionMatch=Exact`], ['paged list', `${CM}?limit=1`]] as const) {
      it(`${verb} at ${rv}: 504 Too large resource version, naming it to the last digit`, async () => {
        const sep = path.includes('?') ? '&' : '?'
        const res = await api.get(`${path}${sep}resourceVersion=${rv}`)
        assert.equal(res.status, 504, res.text)
        assert.deepEqual(res.body, {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: `Timeout: Too large resource version: ${rv}, current: ${current}`,
          reason: 'Timeout',
          details: { causes: TOO_LARGE_CAUSES, retryAfterSeconds: 1 },
          code: 504,
        })
      })
    }

    it(`watch from ${rv}: 200, waiting for a change past it`, async () => {
      const abort = new AbortController()
      const res = await api.server.fetch(new Request(`http://in-process${CM}?watch=1&resourceVersion=${rv}`, { signal: abort.signal }))
      assert.equal(res.status, 200)
      abort.abort()
      await res.body?.cancel().catch(() => {})
    })
  }

  it('a resourceVersion past 2^64 is out of ParseUint range: 400 for get and list, 500 with no reason for watch', async () => {
    const rv = '18446744073709551616'
    const invalid = `resourceVersion: Invalid value: "${rv}": strconv.ParseUint: parsing "${rv}": value out of range`
    for (const path of [`${CM}/cfg`, CM]) {
      const res = await api.get(`${path}?resourceVersion=${rv}`)
      assert.equal(res.status, 400, res.text)
      assert.equal(res.body.reason, 'BadRequest')
      assert.equal(res.body.message, `invalid resource version: ${invalid}`)
    }
    const watch = await api.get(`${CM}?watch=1&resourceVersion=${rv}`)
    assert.equal(watch.status, 500, watch.text)
    assert.equal(watch.body.reason, undefined)
    assert.equal(watch.body.message, invalid)
    assert.equal((await api.get(CM)).body.metadata.resourceVersion, current, 'nothing was written')
  })
})
