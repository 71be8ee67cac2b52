/**
 * A LIST of many objects is written as its answer is read: the body comes
 * in several pieces (the list's fields, runs of items, the end), and joins
 * to the list a client expects; a request made while the answer is being
 * read is served.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { STREAMED_LIST_FROM } from '../../core/http/respond.js'
import { startServer } from './harness.js'

const CM = '/api/v1/namespaces/default/configmaps'

describe('large lists are streamed', { timeout: 120_000 }, () => {
  it('answers a LIST of 1200 ConfigMaps in pieces that join to the whole list, serving another request between them', async () => {
    const api = await startServer()
    const count = STREAMED_LIST_FROM + 700
    for (let i = 0; i < count; i++) {
      const r = await api.post(CM, { metadata: { name: `cm-${String(i).padStart(4, '0')}` }, data: { i: String(i) } })
      assert.equal(r.status, 201)
    }
    const res = await api.server.fetch(new Request(`http://in-process${CM}`))
    assert.equal(res.status, 200)
    assert.equal(res.headers.get('content-type'), 'application/json')
    const reader = res.body!.getReader()
    const decoder = new TextDecoder()
    let text = ''
    let pieces = 0
    let servedBetween = false
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      pieces++
      text += decoder.decode(value, { stream: true })
      if (pieces === 2) servedBetween = (await api.get(`${CM}/cm-0001`)).status === 200
    }
    assert.ok(pieces > 3, `the list came in ${pieces} piece(s)`)
    assert.ok(servedBetween)
    assert.ok(text.endsWith('}\n'))
    const list = JSON.parse(text)
    assert.equal(list.kind, 'ConfigMapList')
    assert.equal(list.items.length, count)
    assert.equal(list.items[0].metadata.name, 'cm-0000')
    assert.equal(list.items[count - 1].data.i, String(count - 1))
    // A small list, YAML and Table answers are written at once as before.
    const small = await api.get(`${CM}?limit=10`)
    assert.equal(small.body.items.length, 10)
  })
})
