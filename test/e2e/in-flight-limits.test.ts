/**
 * --max-requests-inflight with priority and fairness off, against the
 * daemon: a LIST keeps its slot until its answer has been sent. A client
 * that reads a long LIST's answer not at all (an HTTP/2 stream left paused,
 * so its flow-control window closes) holds the only read-only slot; every
 * other read in the meantime gets 429 with Retry-After: 1 and upstream's
 * message, writes (the other pool) still pass, and once the answer has been
 * read to its end the next read is served.
 */
import assert from 'node:assert/strict'
import { connect, constants, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders } from 'node:http2'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { parse } from 'yaml'
import { Daemon } from './daemon.js'

const TOKEN = 'reader-token'
/** More items than the server answers in one piece (STREAMED_LIST_FROM), each a few kB: a body of megabytes, sent as it is read. */
const CONFIGMAPS = 600

interface Answer {
  status: number
  headers: IncomingHttpHeaders
  body: string
}

describe('max-requests-inflight counts a LIST until its answer is sent', () => {
  let daemon: Daemon
  let session: ClientHttp2Session

  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'apiserver-e2e-'))
    writeFileSync(join(dir, 'tokens.csv'), `${TOKEN},reader,3001,"readers"\n`)
    daemon = await Daemon.start(['--enable-priority-and-fairness=false', '--max-requests-inflight=1', `--token-auth-file=${join(dir, 'tokens.csv')}`], { dir })
    const filler = 'x'.repeat(4000)
    const items = Array.from({ length: CONFIGMAPS }, (_, i) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}` }, data: { filler } }))
    // The admin (system:masters) is answered even when its pool is full, as upstream; the objects go in as one apply.
    await daemon.ok('apply', '--server-side', '-f', daemon.manifest('configmaps.json', JSON.stringify({ apiVersion: 'v1', kind: 'List', items })))
    const config = parse(readFileSync(daemon.kubeconfig, 'utf8')) as { clusters: [{ cluster: { 'certificate-authority-data': string } }] }
    session = connect(`https://127.0.0.1:${daemon.port}`, { ca: Buffer.from(config.clusters[0].cluster['certificate-authority-data'], 'base64') })
  })

  after(async () => {
    session?.destroy()
    await daemon?.stop()
  })

  /** A request as the reader (not in system:masters, so limited) on the shared HTTP/2 session. */
  const open = (method: string, path: string, body?: string): ClientHttp2Stream => {
    const stream = session.request({
      ':method': method,
      ':path': path,
      authorization: `Bearer ${TOKEN}`,
      accept: 'application/json',
      ...(body ? { 'content-type': 'application/json' } : {}),
    })
    stream.end(body)
    return stream
  }
  const headersOf = (stream: ClientHttp2Stream): Promise<IncomingHttpHeaders> =>
    new Promise((resolve, reject) => {
      stream.once('response', resolve)
      stream.once('error', reject)
    })
  const answer = async (stream: ClientHttp2Stream): Promise<Answer> => {
    const headers = await headersOf(stream)
    let body = ''
    stream.setEncoding('utf8')
    for await (const chunk of stream) body += String(chunk)
    return { status: Number(headers[':status']), headers, body }
  }

  it('refuses other reads with 429 and Retry-After while an unread LIST holds the slot, lets writes through, and serves reads once it is read', async () => {
    const stalled = open('GET', '/api/v1/namespaces/default/configmaps')
    const stalledHeaders = await headersOf(stalled)
    assert.equal(stalledHeaders[':status'], 200)
    // Not read: the stream stays paused, its window closes, and the server cannot finish the body.
    stalled.pause()

    const reads = await Promise.all(Array.from({ length: 10 }, () => answer(open('GET', '/api/v1/namespaces/default/configmaps'))))
    for (const read of reads) {
      assert.equal(read.status, 429)
      assert.equal(read.headers['retry-after'], '1')
      // Upstream's filter writes its words with Go's http.Error, in plain text, not as a Status.
      assert.equal(read.headers['content-type'], 'text/plain; charset=utf-8')
      assert.equal(read.body, 'Too many requests, please try again later.\n')
    }
    const get = await answer(open('GET', '/api/v1/namespaces/default/configmaps/cm-0'))
    assert.equal(get.status, 429, 'a GET shares the read-only pool')

    // The mutating pool is another one.
    const created = await answer(open('POST', '/api/v1/namespaces/default/configmaps', JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'written' } })))
    assert.equal(created.status, 201, created.body)

    // The admin's /metrics shows the slot taken.
    const metrics = await daemon.ok('get', '--raw', '/metrics')
    assert.match(metrics, /apiserver_current_inflight_requests\{request_kind="readOnly"\} 1/)

    // Read to its end: the whole list arrived, and the slot was given back before its last bytes went out.
    stalled.resume()
    let text = ''
    stalled.setEncoding('utf8')
    for await (const chunk of stalled) text += String(chunk)
    const list = JSON.parse(text) as { items: { metadata: { name: string } }[] }
    assert.equal(list.items.filter((i) => i.metadata.name.startsWith('cm-')).length, CONFIGMAPS)

    const later = await answer(open('GET', '/api/v1/namespaces/default/configmaps/cm-0'))
    assert.equal(later.status, 200, later.body)
  })

  it('holds the slot for a large answer encoded at once (a page of 400 items, under the streamed length) until it is read', async () => {
    const stalled = open('GET', '/api/v1/namespaces/default/configmaps?limit=400')
    assert.equal((await headersOf(stalled))[':status'], 200)
    stalled.pause()
    assert.equal((await answer(open('GET', '/api/v1/namespaces/default/configmaps/cm-2'))).status, 429)
    stalled.resume()
    let text = ''
    stalled.setEncoding('utf8')
    for await (const chunk of stalled) text += String(chunk)
    assert.equal((JSON.parse(text) as { items: unknown[] }).items.length, 400)
    assert.equal((await answer(open('GET', '/api/v1/namespaces/default/configmaps/cm-2'))).status, 200)
  })

  it('gives the slot back when the client goes away before reading the answer', async () => {
    const abandoned = open('GET', '/api/v1/namespaces/default/configmaps')
    assert.equal((await headersOf(abandoned))[':status'], 200)
    abandoned.pause()
    assert.equal((await answer(open('GET', '/api/v1/namespaces/default/configmaps/cm-1'))).status, 429)
    // RST_STREAM with CANCEL, as a client that gives up on an answer resets its stream.
    abandoned.close(constants.NGHTTP2_CANCEL)
    // The server learns of the reset on its own time: a bound, not a measure.
    const deadline = Date.now() + 30_000
    for (;;) {
      const next = await answer(open('GET', '/api/v1/namespaces/default/configmaps/cm-1'))
      if (next.status === 200) break
      assert.equal(next.status, 429)
      assert.ok(Date.now() < deadline, 'the slot was never given back')
      await new Promise((r) => setTimeout(r, 100))
    }
  })
})
