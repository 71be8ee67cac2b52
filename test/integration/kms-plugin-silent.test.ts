/**
 * A KMS plugin that takes the connection on its socket and never answers:
 * each call fails at the provider's timeout, worded as Go's gRPC client
 * words its own deadline.
 */
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { createServer, type Server, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { nodeKmsClients } from '../../runtimes/node/daemon/kms-clients.js'

describe('a KMS plugin that never answers', () => {
  const socketPath = join(tmpdir(), `kms-silent-${process.pid}.sock`)
  let plugin: Server
  const held = new Set<Socket>()

  before(async () => {
    rmSync(socketPath, { force: true })
    plugin = createServer((socket) => {
      held.add(socket)
      socket.resume()
    })
    await new Promise<void>((resolve) => plugin.listen(socketPath, resolve))
  })
  after(async () => {
    for (const socket of held) socket.destroy()
    await new Promise((resolve) => plugin?.close(resolve))
    rmSync(socketPath, { force: true })
  })

  it('fails a v2 decrypt and a v1 encrypt at the timeout with context deadline exceeded', async () => {
    const v2 = nodeKmsClients.v2({ socketPath, timeoutMs: 300 } as Parameters<typeof nodeKmsClients.v2>[0])
    const v1 = nodeKmsClients.v1({ socketPath, timeoutMs: 300 } as Parameters<typeof nodeKmsClients.v1>[0])
    try {
      await assert.rejects(v2.decrypt('uid', { ciphertext: new Uint8Array(8), keyId: 'k', annotations: {} }), {
        message: 'rpc error: code = DeadlineExceeded desc = context deadline exceeded',
      })
      await assert.rejects(v1.encrypt(new Uint8Array(8)), { message: 'rpc error: code = DeadlineExceeded desc = context deadline exceeded' })
    } finally {
      v2.close()
      v1.close()
    }
  })
})
