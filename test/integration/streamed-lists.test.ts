/**
 * A LIST of many objects is written as its answer is read: the body comes
 * in several pieces (the list's fields, runs of items, the end), and joins
 * to the list a client expects; a request made while the answer is being
 * read is served. So is a LIST of a few objects of a megabyte each, in runs
 * of about a megabyte, the event loop let run between the runs it encodes
 * (counted as turns of a setImmediate ticker, not timed).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { LIST_CHUNK_BYTES } from '../../core/encoding/api-json.js'
import { STREAMED_LIST_FROM } from '../../core/http/respond.js'
import { startServer } from './harness.js'
import { countTurns } from '../helpers/event-loop-turns.js'

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

  it('answers a LIST of a few large Secrets in runs of about a megabyte, others served between the runs it encodes; a short list of small ones in one piece', async () => {
    const api = await startServer()
    const SECRETS = '/api/v1/namespaces/default/secrets'
    const blob = Buffer.alloc(500 * 1024, 7).toString('base64')
    for (let i = 0; i < 8; i++) assert.equal((await api.post(SECRETS, { metadata: { name: `s${i}` }, data: { release: blob } })).status, 201)
    // Read from the watch cache, whose items are frozen and whose encodings are kept: the first read encodes them.
    const read = async (path: string) => {
      const counter = countTurns()
      const res = await api.server.fetch(new Request(`http://in-process${path}`))
      const pieces: Uint8Array[] = []
      const reader = res.body!.getReader()
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        pieces.push(value)
      }
      const turns = counter.stop()
      return { status: res.status, pieces, turns, text: pieces.map((p) => new TextDecoder().decode(p)).join('') }
    }
    const first = await read(`${SECRETS}?resourceVersion=0`)
    assert.equal(first.status, 200)
    const list = JSON.parse(first.text)
    assert.deepEqual(list.items.map((s: { metadata: { name: string } }) => s.metadata.name), ['s0', 's1', 's2', 's3', 's4', 's5', 's6', 's7'])
    assert.equal(list.items[5].data.release, blob)
    assert.ok(first.pieces.length > 3, `the list came in ${first.pieces.length} piece(s)`)
    for (const piece of first.pieces) assert.ok(piece.byteLength < LIST_CHUNK_BYTES + 800 * 1024, `a piece of ${piece.byteLength} bytes`)
    assert.ok(first.turns > 0, 'the event loop ran while the list was encoded')
    // Read again, the same bytes; a short list of small objects is one piece.
    assert.equal((await read(`${SECRETS}?resourceVersion=0`)).text, first.text)
    assert.equal((await api.post('/api/v1/namespaces/default/configmaps', { metadata: { name: 'small' } })).status, 201)
    const small = await read('/api/v1/namespaces/default/configmaps?resourceVersion=0')
    assert.equal(small.pieces.length, 1)
    assert.equal(JSON.parse(small.text).items.length, 1)
  })
})
