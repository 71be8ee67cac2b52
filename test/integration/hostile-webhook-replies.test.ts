/**
 * Webhook replies a hostile or broken webhook sends, against real servers on
 * loopback: an endless reply without a length, a reply that drips past its
 * deadline, a reply nested past any later walk's stack, and a reply (or a
 * mutating webhook's patch) of megabytes that would hold the thread while
 * it is parsed. Both clients:
 * the Web `fetch` one (in-process servers, Bun, Deno) and the daemon's.
 */
import assert from 'node:assert/strict'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { readAdmissionAnswer } from '../../core/admission/webhook/review.js'
import { fetchWebhookClient, parseWebhookReply } from '../../core/crd/webhook-client.js'
import { MAX_WEBHOOK_RESPONSE_BYTES } from '../../core/crd/webhook-reply.js'
import { nodeWebhookClient, type NodeWebhookClient } from '../../runtimes/node/daemon/webhook-client.js'

type Handler = (req: IncomingMessage, res: ServerResponse) => void

const nested = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth)

describe('hostile webhook replies', () => {
  let server: Server
  let base = ''
  let nodeClient: NodeWebhookClient
  const handlers = new Map<string, Handler>()
  /** Bytes the endless reply got written before the client hung up. */
  let endlessBytesWritten = 0

  before(async () => {
    const chunk = Buffer.alloc(1 << 20, 0x20)
    handlers.set('/endless', (_req, res) => {
      // No content-length: chunked, and never ending while the client reads.
      res.writeHead(200, { 'content-type': 'application/json' })
      const pump = (): void => {
        while (!res.destroyed && res.write(chunk)) endlessBytesWritten += chunk.length
      }
      res.on('drain', () => {
        endlessBytesWritten += chunk.length
        pump()
      })
      pump()
    })
    handlers.set('/drip', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      const timer = setInterval(() => res.write(' '), 20)
      res.on('close', () => clearInterval(timer))
    })
    handlers.set('/deep', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(`{"response":${nested(2000)}}`)
    })
    server = createServer((req, res) => {
      req.resume()
      const handler = handlers.get(req.url ?? '')
      if (handler) handler(req, res)
      else res.writeHead(404).end()
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    nodeClient = nodeWebhookClient()
  })

  after(async () => {
    nodeClient?.close()
    server?.closeAllConnections()
    await new Promise((resolve) => server?.close(resolve))
  })

  it('refuses an endless reply without a length once it passes the bound, not at the deadline', async () => {
    await assert.rejects(fetchWebhookClient().post({ url: `${base}/endless` }, { kind: 'AdmissionReview' }, 120_000), (err: Error) => {
      assert.equal(err.message, `Post "${base}/endless": response larger than ${MAX_WEBHOOK_RESPONSE_BYTES} bytes`)
      return true
    })
    // What was sent beyond the bound sat in socket buffers at most: the reply was not read on to the deadline.
    assert.ok(endlessBytesWritten < MAX_WEBHOOK_RESPONSE_BYTES + 32 * 1024 * 1024, `${endlessBytesWritten} bytes were written`)
  })

  it('cuts a reply that drips its body past the deadline, as the daemon client does', async () => {
    for (const client of [fetchWebhookClient(), nodeClient]) {
      await assert.rejects(client.post({ url: `${base}/drip` }, {}, 300), (err: Error) => {
        assert.equal(err.message, `Post "${base}/drip": context deadline exceeded (no answer within 300ms)`)
        return true
      })
    }
  })

  it('refuses a reply nested more deeply than any later walk could follow, with Go\'s words', async () => {
    for (const client of [fetchWebhookClient(), nodeClient]) {
      await assert.rejects(client.post({ url: `${base}/deep` }, {}, 10_000), (err: Error) => {
        assert.equal(err.message, `Post "${base}/deep": the response body is not JSON: invalid character '[' exceeded max depth`)
        return true
      })
    }
  })

  /** Turns of the event loop taken while `work` runs. */
  async function turnsDuring<T>(work: Promise<T>): Promise<{ value: T; turns: number }> {
    let done = false
    const settled = work.finally(() => (done = true))
    let turns = 0
    while (!done) {
      await nextTurn()
      turns++
    }
    return { value: await settled, turns }
  }

  it('lets the event loop turn while a mutating webhook\'s patch of megabytes is decoded', async () => {
    // 40 MiB of base64: decoding it with atob and Uint8Array.from held the thread for 7 s.
    const ops = [{ op: 'add', path: '/data/big', value: 'a'.repeat(30 * 1024 * 1024) }]
    const reply = { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'u', allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(ops)).toString('base64') } }
    const { value, turns } = await turnsDuring(readAdmissionAnswer(reply, 'v1', 'u', true))
    assert.deepEqual(value.patch, ops)
    assert.ok(turns > 10, `the decode let the event loop turn ${turns} times`)
  })

  it('lets the event loop turn while a reply of megabytes is parsed', async () => {
    // 24 MiB of small objects: JSON.parse of it held the thread for over a second, no other request served.
    const text = `{"items":[${Array(2 * 1024 * 1024).fill('{"a":12}').join(',')}]}`
    const { value, turns } = await turnsDuring(parseWebhookReply(text) as Promise<{ items: unknown[] }>)
    assert.equal(value.items.length, 2 * 1024 * 1024)
    assert.ok(turns > 10, `the parse let the event loop turn ${turns} times`)
  })
})
