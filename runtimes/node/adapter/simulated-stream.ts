/**
 * An exec or attach to a simulated node's container (core's
 * `UpgradeHandoff.simulated`): no agent is dialled; the client's connection
 * is upgraded here to the WebSocket channel protocol it asked for, the
 * stream's output is written on stdout and its exit on the error channel,
 * as a kubelet writes them, and the connection is closed.
 */
import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import type { SimulatedStream } from '../../../core/proxy/transport.js'

/** The channel protocols a kubelet speaks, newest first. */
const CHANNEL_PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io']
const MAX_CLIENT_FRAME_BYTES = 64 * 1024
const STDOUT = 1
const ERROR = 3

/** What the error channel carries at the end: v4 and later a Status, older protocols nothing for success. */
function exitMessage(protocol: string, exitCode: number): string {
  const structured = protocol === 'v4.channel.k8s.io' || protocol === 'v5.channel.k8s.io'
  if (exitCode === 0) return structured ? JSON.stringify({ metadata: {}, status: 'Success' }) : ''
  const message = `command terminated with non-zero exit code: exit code ${exitCode}`
  if (!structured) return message
  return JSON.stringify({
    metadata: {},
    status: 'Failure',
    message,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(exitCode) }] },
  })
}

const frame = (channel: number, text: string): Buffer => Buffer.concat([Buffer.from([channel]), Buffer.from(text)])

/** Upgrades `socket` and plays `stream` on it; a client that asks for no channel protocol (SPDY) is answered 400. */
export async function playSimulatedStream(req: IncomingMessage, socket: Duplex, head: Buffer, stream: SimulatedStream): Promise<void> {
  const offered = (req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim())
  const protocol = CHANNEL_PROTOCOLS.find((p) => offered.includes(p))
  if (req.headers.upgrade?.toLowerCase() !== 'websocket' || !protocol) {
    socket.end('HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\nsimulated nodes answer exec and attach over WebSocket (v5.channel.k8s.io to channel.k8s.io) only\n')
    return
  }
  // Loaded with the first such stream: the WebSocket package (and zlib, which it loads) is no part of a start.
  const { WebSocketServer } = await import('ws')
  // Nothing the client sends is read (stdin goes nowhere): a frame past 64 KiB closes the connection
  // instead of being gathered whole (ws takes up to 100 MiB a frame by default).
  const server = new WebSocketServer({ noServer: true, handleProtocols: () => protocol, maxPayload: MAX_CLIENT_FRAME_BYTES })
  server.handleUpgrade(req, socket, head, (ws) => {
    // A frame too large, or a broken one, ends this connection alone (unheard, the error would end the process).
    ws.on('error', () => ws.terminate())
    ws.send(frame(STDOUT, stream.stdout))
    ws.send(frame(ERROR, exitMessage(protocol, stream.exitCode)))
    ws.close(1000)
    server.close()
  })
}
