/**
 * The server's requests to itself hold their body as bytes: each of a
 * Request's ways of giving a body must give the same bytes, once, as the
 * runtime's own Request does.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { inProcessRequest } from '../../../core/machinery/in-process-request.js'

const URL_ = 'http://in-process/api/v1/namespaces/default/configmaps'
const BODY = '{"metadata":{"name":"ü"}}'
const make = (headers: Record<string, string> = {}) => inProcessRequest(URL_, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, BODY)

async function streamText(stream: ReadableStream<Uint8Array> | null): Promise<string> {
  assert.ok(stream, 'a body stream')
  return new Response(stream).text()
}

describe('a request the server makes to itself', () => {
  it('is a Request with its method, URL and headers, and declares the length of its body in bytes', () => {
    const request = make()
    assert.ok(request instanceof Request)
    assert.equal(request.method, 'POST')
    assert.equal(request.url, URL_)
    assert.equal(request.headers.get('content-type'), 'application/json')
    assert.equal(request.headers.get('content-length'), String(new TextEncoder().encode(BODY).byteLength))
  })

  it('gives its body by text(), json() and arrayBuffer(), once, as a Request does', async () => {
    const text = make()
    assert.equal(text.bodyUsed, false)
    assert.equal(await text.text(), BODY)
    assert.equal(text.bodyUsed, true)
    await assert.rejects(text.text(), TypeError)
    await assert.rejects(text.arrayBuffer(), TypeError)
    assert.deepEqual(await make().json(), JSON.parse(BODY))
    assert.equal(new TextDecoder().decode(await make().arrayBuffer()), BODY)
  })

  it('gives the same bytes as a stream, with the headers as they are when it is asked for', async () => {
    const request = make({ authorization: 'Bearer secret' })
    request.headers.delete('authorization')
    assert.equal(await streamText(request.body), BODY)
    assert.equal(request.bodyUsed, true)
    await assert.rejects(request.text(), TypeError)
    // The stream is the runtime's own Request's, which holds the headers as they were then.
    assert.equal(request.headers.get('authorization'), null)
  })

  it('clones into a request of its own: both read the body, headers apart', async () => {
    const request = make()
    const copy = request.clone()
    copy.headers.set('x-copy', '1')
    assert.equal(request.headers.get('x-copy'), null)
    assert.equal(await streamText(copy.body), BODY)
    assert.equal(await request.text(), BODY)
    // A clone once the body was read is refused, as the runtime refuses it.
    assert.throws(() => request.clone(), TypeError)
  })

  it('is given to its aborts as any request is', () => {
    const abort = new AbortController()
    const request = inProcessRequest(URL_, { method: 'PUT', signal: abort.signal }, new Uint8Array([1, 2, 3]))
    abort.abort()
    assert.equal(request.signal.aborted, true)
    assert.equal(request.headers.get('content-length'), '3')
  })
})
