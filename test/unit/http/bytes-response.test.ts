/**
 * An answer of bytes in hand (core/http/bytes-response.ts) reads as a
 * Response of the runtime's would: its body once, by any reader, as text,
 * JSON, bytes, a stream or a blob; a clone before reading; a second read
 * refused.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { bytesResponse, useLazyResponseBodies } from '../../../core/http/bytes-response.js'

useLazyResponseBodies()

const body = { kind: 'Status', apiVersion: 'v1', code: 404, message: 'é not found' }
const bytes = new TextEncoder().encode(JSON.stringify(body))
const answer = (): Response => bytesResponse(bytes, 404, { 'content-type': 'application/json' })

describe('bytesResponse', () => {
  it('is a Response with its status and headers', () => {
    const res = answer()
    assert.ok(res instanceof Response)
    assert.equal(res.status, 404)
    assert.equal(res.ok, false)
    assert.equal(res.headers.get('content-type'), 'application/json')
    assert.equal(res.bodyUsed, false)
  })

  it('reads its body as JSON, text or bytes, once', async () => {
    const json = answer()
    assert.deepEqual(await json.json(), body)
    assert.equal(json.bodyUsed, true)
    await assert.rejects(json.text(), TypeError)
    await assert.rejects(json.arrayBuffer(), TypeError)
    assert.throws(() => json.clone(), TypeError)
    assert.equal(await answer().text(), JSON.stringify(body))
    const buffer = await answer().arrayBuffer()
    assert.deepEqual(new Uint8Array(buffer), bytes)
    // A copy: the answer's bytes stay as they were.
    new Uint8Array(buffer).fill(0)
    assert.equal(await answer().text(), JSON.stringify(body))
  })

  it('gives its body as a stream, a blob, or to a Response made from it', async () => {
    const streamed = answer()
    const read = await new Response(streamed.body).text()
    assert.equal(read, JSON.stringify(body))
    assert.equal(streamed.bodyUsed, true)
    await assert.rejects(streamed.json(), TypeError)
    assert.equal(await (await answer().blob()).text(), JSON.stringify(body))
    const source = answer()
    const rewrapped = new Response(source.body, source)
    assert.equal(rewrapped.status, 404)
    assert.equal(rewrapped.headers.get('content-type'), 'application/json')
    assert.deepEqual(await rewrapped.json(), body)
  })

  it('clones before a read, each clone read on its own; headers changed before are kept', async () => {
    const res = answer()
    res.headers.set('x-extra', 'yes')
    const copy = res.clone()
    assert.deepEqual(await copy.json(), body)
    assert.equal(copy.headers.get('x-extra'), 'yes')
    assert.equal(copy.status, 404)
    assert.deepEqual(await res.json(), body)
    const streamed = answer()
    assert.equal(streamed.body === null, false)
    assert.equal(await streamed.clone().text(), JSON.stringify(body))
  })

  it('is the global Response where something put a Response of its own there', () => {
    const runtime = globalThis.Response
    class Lighter extends runtime {}
    globalThis.Response = Lighter
    try {
      assert.ok(answer() instanceof Lighter)
    } finally {
      globalThis.Response = runtime
    }
  })
})
