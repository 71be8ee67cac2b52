/**
 * Port-forward as a node agent serves it: placeholder until the SPDY framer
 * is in; the upgrade is refused.
 */
import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'

export function servePortForward(_req: IncomingMessage, socket: Duplex, _head: Buffer): void {
  socket.end('HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n')
}
