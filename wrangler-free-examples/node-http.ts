/**
 * The server behind a bare `node:http` server: the few lines that turn an
 * IncomingMessage into a fetch Request and a Response back into bytes.
 *
 * Run (after `npm run build`):
 *   node --import tsx wrangler-free-examples/node-http.ts
 *   curl -H "Authorization: Bearer $TOKEN" http://127.0.0.1:8080/api/v1/namespaces
 *
 * Plain HTTP with a static bearer token, so it binds loopback only. The
 * daemon (runtimes/node) is the TLS version with client certificates.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { env } from 'node:process'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { ReadableStream as NodeReadableStream } from 'node:stream/web'
import { ADMIN_IDENTITY, createApiServer } from 'kube-apiserver-ts'

const token = env['APISERVER_TOKEN'] ?? crypto.randomUUID()
const server = createApiServer({ authentication: { clientCertificates: false, tokens: [{ token, user: ADMIN_IDENTITY }] } })

/** Connection-level headers belong to this hop, not to the Response the core made. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade'])

function toRequest(incoming: IncomingMessage, signal: AbortSignal): Request {
  const headers = new Headers()
  for (let i = 0; i + 1 < incoming.rawHeaders.length; i += 2) headers.append(incoming.rawHeaders[i]!, incoming.rawHeaders[i + 1]!)
  const method = incoming.method ?? 'GET'
  // A fixed origin: the core routes on the path, and a hostile Host header then cannot make URL parsing fail.
  const url = new URL(incoming.url ?? '/', 'http://127.0.0.1')
  const hasBody = method !== 'GET' && method !== 'HEAD'
  return new Request(url, {
    method,
    headers,
    signal,
    // `duplex: 'half'` is required by fetch for a streamed request body.
    ...(hasBody ? { body: Readable.toWeb(incoming) as ReadableStream<Uint8Array>, duplex: 'half' as const } : {}),
  })
}

async function writeResponse(response: Response, outgoing: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {}
  response.headers.forEach((value, name) => {
    if (!HOP_BY_HOP.has(name)) headers[name] = value
  })
  outgoing.writeHead(response.status, headers)
  if (!response.body) return void outgoing.end()
  // pipeline keeps backpressure for slow clients and cancels the body (ending a watch) when the client goes away.
  await pipeline(Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>), outgoing)
}

const httpServer = createServer((incoming, outgoing) => {
  const aborted = new AbortController()
  outgoing.once('close', () => {
    if (!outgoing.writableFinished) aborted.abort()
  })
  server
    // Always pass connection info: it marks the request as one from the network.
    .fetch(toRequest(incoming, aborted.signal), { remoteAddress: incoming.socket.remoteAddress ?? '' })
    .then((response) => writeResponse(response, outgoing))
    .catch((err: unknown) => {
      if (!outgoing.headersSent) outgoing.writeHead(500, { 'content-type': 'text/plain' })
      outgoing.end(`internal error: ${err instanceof Error ? err.message : String(err)}`)
    })
})

httpServer.listen(Number(env['PORT'] ?? 8080), '127.0.0.1', () => {
  const { port } = httpServer.address() as AddressInfo
  console.log(JSON.stringify({ url: `http://127.0.0.1:${port}`, token }))
})
