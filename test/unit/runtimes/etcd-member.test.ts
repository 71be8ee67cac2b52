/**
 * An etcd member's connection (runtimes/node/storage/etcd-member.ts) when
 * the member stops answering without closing the connection (a frozen
 * process, a partition): the keepalive ping goes unanswered, the connection
 * is dropped, and a watch stream, which has no deadline of its own, ends
 * as unavailable instead of waiting for ever. The next call connects anew.
 */
import assert from 'node:assert/strict'
import * as net from 'node:net'
import { after, before, describe, it } from 'node:test'
import { EtcdMember } from '../../../runtimes/node/storage/etcd-member.js'
import { EtcdCallError, GrpcStatus } from '../../../runtimes/node/storage/etcd-grpc-status.js'

describe('an etcd member that stops answering', () => {
  let server: net.Server
  let port: number
  let connections = 0

  before(async () => {
    // Accepts and reads everything, answers nothing: not even HTTP/2's SETTINGS.
    server = net.createServer((socket) => {
      connections++
      socket.on('data', () => {})
      socket.on('error', () => {})
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    port = (server.address() as net.AddressInfo).port
  })

  after(async () => {
    await new Promise((resolve) => server.close(resolve))
  })

  it('ends a watch stream once the keepalive ping goes unanswered, and connects anew for the next call', async () => {
    const member = new EtcdMember(`http://127.0.0.1:${port}`, { keepaliveMs: 50, keepaliveTimeoutMs: 100 })
    try {
      const ended = new Promise<EtcdCallError | undefined>((resolve) => {
        member.stream('/etcdserverpb.Watch/Watch', { message: () => assert.fail('no message can come'), end: resolve })
      })
      const err = await ended
      assert.ok(err instanceof EtcdCallError)
      assert.equal(err.code, GrpcStatus.UNAVAILABLE)
      assert.equal(connections, 1)
      const call = member.call('/etcdserverpb.KV/Range', Buffer.alloc(0), Date.now() + 100, () => 'answered')
      await assert.rejects(call, (e: unknown) => e instanceof EtcdCallError && e.code === GrpcStatus.DEADLINE_EXCEEDED)
      // The server's accept is its own event: waited for (boundedly), not assumed to come before the deadline.
      for (let i = 0; i < 400 && connections < 2; i++) await new Promise((resolve) => setTimeout(resolve, 5))
      assert.equal(connections, 2, 'the call after the drop opened a new connection')
    } finally {
      member.close()
    }
  })
})
