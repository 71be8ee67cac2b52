/**
 * The WebSocket of an exec to a simulated node's container: the output and
 * exit are written and the connection closed; what the client sends is not
 * gathered: a frame announcing more than 64 KiB ends the connection at once
 * (by default the WebSocket server would take 100 MiB a frame, and wait half
 * a minute for a client that never acknowledges the close).
 */
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import { connect, type AddressInfo, type Socket } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { playSimulatedStream } from '../../runtimes/node/adapter/simulated-stream.js'

describe('a simulated exec stream', { timeout: 20_000 }, () => {
  let server: Server
  before(async () => {
    server = createServer()
    server.on('upgrade', (req, socket, head) => void playSimulatedStream(req, socket, head, { stdout: 'hello\n', exitCode: 0 }))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  })
  after(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })

  async function upgraded(): Promise<{ socket: Socket; head: Promise<string> }> {
    const socket = connect((server.address() as AddressInfo).port, '127.0.0.1')
    await new Promise<void>((resolve) => socket.once('connect', resolve))
    socket.write(
      'GET /exec HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n' +
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n',
    )
    const head = new Promise<string>((resolve) => {
      let text = ''
      socket.on('data', (d: Buffer) => {
        text += d.toString('latin1')
        if (text.includes('\r\n\r\n')) resolve(text)
      })
    })
    return { socket, head }
  }

  it('answers with the output and closes; a client frame past 64 KiB ends the connection at once', async () => {
    const { socket, head } = await upgraded()
    assert.match(await head, /^HTTP\/1\.1 101 Switching Protocols\r\n/)
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
    // A masked binary frame announcing 1 MiB (64-bit length), then bytes of it; the close is never acknowledged.
    const header = Buffer.alloc(14)
    header[0] = 0x82
    header[1] = 0x80 | 127
    header.writeBigUInt64BE(1024n * 1024n, 2)
    socket.write(header)
    socket.write(Buffer.alloc(128 * 1024))
    socket.on('error', () => {})
    await closed
  })

  it('ends a connection that sends a broken frame, and goes on serving others', async () => {
    const { socket, head } = await upgraded()
    await head
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
    socket.on('error', () => {})
    // Opcode 3 is reserved: the WebSocket server raises an error for the connection.
    socket.write(Buffer.from([0x83, 0x80, 1, 2, 3, 4]))
    await closed
    const next = await upgraded()
    assert.match(await next.head, /^HTTP\/1\.1 101 Switching Protocols\r\n/)
    next.socket.destroy()
  })
})
