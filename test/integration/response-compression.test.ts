/**
 * APIResponseCompression, as upstream serves it: an API answer of more
 * than 128 KiB goes out gzip-compressed to a client whose Accept-Encoding
 * names gzip; smaller answers, watches and clients that do not ask get it
 * as it is. The body decompresses to exactly the uncompressed answer.
 */
import assert from 'node:assert/strict'
import { gunzipSync } from 'node:zlib'
import { before, describe, it } from 'node:test'
import type { ApiServer } from '../../core/index.js'
import { createTestServer } from './harness.js'
import { nodeGzipStream } from '../../runtimes/node/adapter/gzip-stream.js'

const CM = '/api/v1/namespaces/default/configmaps'
const BIG = '/api/v1/namespaces/big/configmaps'
const GZIP = { 'accept-encoding': 'gzip' }

async function raw(server: ApiServer, path: string, headers: Record<string, string> = {}): Promise<{ res: Response; bytes: Buffer }> {
  const res = await server.fetch(new Request(`http://in-process${path}`, { headers }))
  return { res, bytes: Buffer.from(await res.arrayBuffer()) }
}

async function create(server: ApiServer, path: string, body: unknown): Promise<void> {
  const res = await server.fetch(new Request(`http://in-process${path}`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }))
  assert.equal(res.status, 201, await res.text())
}

/** Two reads of one list with nothing written between: the same JSON. */
function sameJson(a: Buffer, b: Buffer): void {
  assert.deepEqual(JSON.parse(a.toString()), JSON.parse(b.toString()))
}

for (const [name, ports] of [
  ['the Web CompressionStream', {}],
  ["Node's zlib at level 1", { gzipStream: nodeGzipStream }],
] as const) {
  describe(`API answers over 128 KiB, gzip-compressed (${name})`, () => {
    let server: ApiServer
    before(async () => {
      server = createTestServer({}, ports)
      await server.ready
      await create(server, '/api/v1/namespaces', { metadata: { name: 'big' } })
      // 600 ConfigMaps of some 400 bytes: a list of about 250 KB, written as it is read (over 500 items).
      for (let i = 0; i < 600; i++) await create(server, BIG, { metadata: { name: `cm-${i}` }, data: { v: 'x'.repeat(300) } })
      // 520 small ones: a list written as it is read, yet under the threshold.
      for (let i = 0; i < 520; i++) await create(server, CM, { metadata: { name: `s-${i}` } })
      await create(server, BIG, { metadata: { name: 'large' }, data: { v: 'y'.repeat(200 * 1024) } })
    })

    it('compresses a long list for a client that accepts gzip, and only then', async () => {
      const plain = await raw(server, BIG)
      assert.equal(plain.res.status, 200)
      assert.equal(plain.res.headers.get('content-encoding'), null)
      assert.ok(plain.bytes.byteLength > 128 * 1024, `${plain.bytes.byteLength} bytes`)

      const zipped = await raw(server, BIG, { 'accept-encoding': 'gzip, deflate, br' })
      assert.equal(zipped.res.status, 200)
      assert.equal(zipped.res.headers.get('content-encoding'), 'gzip')
      assert.match(zipped.res.headers.get('vary') ?? '', /Accept-Encoding/)
      assert.equal(zipped.res.headers.get('content-type'), 'application/json')
      assert.equal(zipped.res.headers.get('content-length'), null)
      assert.ok(zipped.bytes.byteLength < plain.bytes.byteLength / 4, `${zipped.bytes.byteLength} of ${plain.bytes.byteLength} bytes`)
      sameJson(gunzipSync(zipped.bytes), plain.bytes)
    })

    it('compresses one large object, and leaves a small one and a short streamed list as they are', async () => {
      const large = await raw(server, `${BIG}/large`, GZIP)
      assert.equal(large.res.headers.get('content-encoding'), 'gzip')
      assert.equal(JSON.parse(gunzipSync(large.bytes).toString()).data.v.length, 200 * 1024)

      const small = await raw(server, `${CM}/s-1`, GZIP)
      assert.equal(small.res.headers.get('content-encoding'), null)
      assert.equal(JSON.parse(small.bytes.toString()).metadata.name, 's-1')

      // Over 500 items, so written as it is read, but under 128 KiB: sent as it is, whole.
      const short = await raw(server, CM, GZIP)
      assert.equal(short.res.headers.get('content-encoding'), null)
      const list = JSON.parse(short.bytes.toString())
      assert.ok(list.items.length >= 520, `${list.items.length} items`)
      assert.ok(short.bytes.byteLength <= 128 * 1024)
    })

    it('takes gzip only as a token of its own, as upstream reads Accept-Encoding', async () => {
      for (const header of ['gzip;q=1.0', 'deflate', 'identity', 'x-gzip', '']) {
        const { res } = await raw(server, BIG, { 'accept-encoding': header })
        assert.equal(res.headers.get('content-encoding'), null, header)
      }
      const { res } = await raw(server, BIG, { 'accept-encoding': 'deflate , gzip' })
      assert.equal(res.headers.get('content-encoding'), 'gzip')
    })

    it('compresses YAML and protobuf answers too, and a Table', async () => {
      for (const accept of ['application/yaml', 'application/vnd.kubernetes.protobuf', 'application/json;as=Table;v=v1;g=meta.k8s.io']) {
        const plain = await raw(server, BIG, { accept })
        const zipped = await raw(server, BIG, { accept, ...GZIP })
        assert.equal(zipped.res.status, 200, accept)
        assert.equal(zipped.res.headers.get('content-encoding'), 'gzip', accept)
        assert.equal(zipped.res.headers.get('content-type'), plain.res.headers.get('content-type'))
        if (accept === 'application/yaml') assert.equal(gunzipSync(zipped.bytes).toString(), plain.bytes.toString())
        else assert.equal(gunzipSync(zipped.bytes).byteLength, plain.bytes.byteLength, accept)
      }
    })

    it('never compresses a watch', async () => {
      const controller = new AbortController()
      const res = await server.fetch(new Request(`http://in-process${BIG}?watch=1`, { headers: GZIP, signal: controller.signal }))
      assert.equal(res.status, 200)
      assert.equal(res.headers.get('content-encoding'), null)
      // The initial events of 600 objects are well over the threshold: they come as JSON lines.
      const reader = res.body!.getReader()
      const { value } = await reader.read()
      assert.match(new TextDecoder().decode(value), /^\{"type":"ADDED"/)
      controller.abort()
      await reader.cancel().catch(() => {})
    })
  })
}

describe('APIResponseCompression off', () => {
  it('answers every client uncompressed', async () => {
    const server = createTestServer({ serving: { responseCompression: false } })
    await server.ready
    await create(server, CM, { metadata: { name: 'large' }, data: { v: 'y'.repeat(200 * 1024) } })
    const { res, bytes } = await raw(server, `${CM}/large`, GZIP)
    assert.equal(res.headers.get('content-encoding'), null)
    assert.equal(JSON.parse(bytes.toString()).data.v.length, 200 * 1024)
  })
})
