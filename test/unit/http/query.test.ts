import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { parseQuery, queryOf } from '../../../core/http/query.js'

const pairsOf = (q: URLSearchParams) => [...q.entries()]

describe('query parameters read once', () => {
  it('reads any query as the URL parser does, malformed escapes included', () => {
    const piece = fc.oneof(fc.string(), fc.constantFrom('%', '%4', '%41', '%zz', '+', '=', '&', '%E2%82', '%C3%A9', 'a=b', '==', '#'))
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (parts) => {
        // As the query arrives: serialized by the URL parser, then read by its searchParams.
        const url = new URL(`http://in-process/api?${parts.join('')}`)
        assert.deepEqual(pairsOf(parseQuery(url.search.slice(1))), pairsOf(url.searchParams), JSON.stringify(url.search))
      }),
      { numRuns: 2000, seed: 14 },
    )
    const selector = encodeURIComponent(Array.from({ length: 20000 }, (_, i) => `k${i}!=v`).join(','))
    assert.deepEqual(pairsOf(parseQuery(`labelSelector=${selector}&watch=1`)), pairsOf(new URLSearchParams(`labelSelector=${selector}&watch=1`)))
  })

  it('keeps one parse per request and ignores the fragment', () => {
    const request = new Request('http://in-process/api/v1/pods?limit=5&fieldSelector=a%3Db#frag')
    const query = queryOf(request)
    assert.equal(query.get('fieldSelector'), 'a=b')
    assert.equal(query.get('limit'), '5')
    assert.equal(queryOf(request), query)
    assert.equal(queryOf(new Request('http://in-process/api')).size, 0)
  })
})
