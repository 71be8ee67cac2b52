/**
 * What the daemon's webhook client holds of replies, against a real
 * webhook on loopback whose replies are huge: every reply being read at
 * once shares one bound (a token webhook is called for any bearer token a
 * stranger sends), and a reply nobody uses (an audit receiver's) is read
 * without being kept.
 */
import assert from 'node:assert/strict'
import { createServer, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { MAX_BUFFERED_WEBHOOK_BYTES, nodeWebhookClient, type NodeWebhookClient } from '../../runtimes/node/daemon/webhook-client.js'

/** Each reply: within the bound of one (64 MiB), three of them past the bound of all together. */
const REPLY_BYTES = 59 * 1024 * 1024
const CALLS = 3

describe('webhook replies held in memory', () => {
  let webhook: Server
  let url = ''
  let client: NodeWebhookClient
  const reply = Buffer.alloc(REPLY_BYTES, 0x78)

  before(async () => {
    // Every reply's bytes go out at once; each answer ends only once all of them were taken or refused, so
    // the client holds them together.
    let waiting: Array<{ res: ServerResponse; flushed: Promise<unknown> }> = []
    webhook = createServer((req, res) => {
      req.resume()
      res.writeHead(200, { 'content-type': 'application/json' })
      const flushed = new Promise((resolve) => res.write(reply, resolve))
      waiting.push({ res, flushed })
      if (waiting.length < CALLS) return
      const all = waiting
      waiting = []
      void Promise.all(all.map((w) => w.flushed)).then(() => all.forEach((w) => w.res.end()))
    })
    await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve))
    url = `http://127.0.0.1:${(webhook.address() as AddressInfo).port}/`
    client = nodeWebhookClient()
  })

  after(async () => {
    client?.close()
    webhook?.closeAllConnections()
    await new Promise((resolve) => webhook?.close(resolve))
  })

  it('refuses the reply that would take the replies being read past their shared bound', async () => {
    assert.ok(CALLS * REPLY_BYTES > MAX_BUFFERED_WEBHOOK_BYTES)
    const outcomes = await Promise.allSettled(Array.from({ length: CALLS }, () => client.get({ url }, { timeoutMs: 60_000 })))
    const refused = outcomes.filter((o) => o.status === 'rejected')
    assert.ok(refused.length >= 1, 'every reply was held at once')
    for (const o of refused) assert.match(String((o as PromiseRejectedResult).reason), /webhook responses being read hold more than 134217728 bytes/)
    for (const o of outcomes) if (o.status === 'fulfilled') assert.equal(o.value.length, REPLY_BYTES)
  })

  it('reads a reply nobody uses without keeping it', async () => {
    const outcomes = await Promise.allSettled(Array.from({ length: CALLS }, () => client.postIgnoringReply({ url }, '{}', 60_000)))
    assert.deepEqual(
      outcomes.map((o) => o.status),
      Array(CALLS).fill('fulfilled'),
    )
  })
})
