/**
 * A small node agent for the node-agent tests, on loopback over HTTPS: it
 * accepts only a client certificate its client CA signed (the server's
 * `--nodeagent-client-*` pair), and serves what a real agent serves to the
 * API server: `/containerLogs/<ns>/<pod>/<container>` (with follow, which
 * keeps writing a line until the caller leaves), its own paths (`/healthz`,
 * `/pods`) for nodes/proxy, and `/exec` and `/attach` over WebSocket with
 * the channel protocols (`v5.channel.k8s.io` down to `channel.k8s.io`):
 * stdin is echoed on stdout, and when stdin ends the command "exits" with
 * the code of its `exit-with N` words, reported on the error channel as a
 * real agent reports it; `tar cf - <file>` writes a tar of the file, for
 * kubectl cp. `/portForward` is served over SPDY/3.1 by
 * spdy-agent.ts. Every request is recorded with the client's common name.
 */
import { createServer, type Server } from 'node:https'
import type { IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Duplex } from 'node:stream'
import type { TLSSocket } from 'node:tls'
import { WebSocketServer, type WebSocket } from 'ws'
import { type CertificateAuthority, createCertificateAuthority, issueServingCertificate } from '../../core/pki/certificates.js'
import { servePortForward } from './spdy-agent.js'

export interface AgentRequest {
  method: string
  path: string
  clientCommonName?: string
  headers: Record<string, string | string[] | undefined>
}

export interface NodeAgent {
  port: number
  /** PEM of the CA that signed the agent's serving certificate: what --nodeagent-certificate-authority names. */
  servingCA: string
  seen: AgentRequest[]
  /** Lines of each container's log, by `<ns>/<pod>/<container>`. */
  logs: Map<string, string[]>
  /** Containers (`<ns>/<pod>/<container>`) whose log is answered with a redirect elsewhere. */
  redirects: Set<string>
  /** Follow streams still open. */
  openFollows(): number
  close(): Promise<void>
}

const CHANNEL_PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io']

/** What a real agent puts on the error channel when the command ends (v4 and later: a Status). */
function exitStatus(code: number, command: string[]): string {
  if (code === 0) return JSON.stringify({ metadata: {}, status: 'Success' })
  return JSON.stringify({
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: error executing command [${command.join(' ')}], exit code ${code}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(code) }] },
  })
}

/** A ustar archive of one file, as `tar cf - <path>` writes it (the leading slash dropped). */
export function tarOf(path: string, content: string): Buffer {
  const body = Buffer.from(content)
  const header = Buffer.alloc(512)
  const field = (text: string, at: number, length: number) => header.write(text, at, length, 'latin1')
  field(path.replace(/^\/+/, ''), 0, 100)
  field('0000644\0', 100, 8)
  field('0000000\0', 108, 8)
  field('0000000\0', 116, 8)
  field(`${body.length.toString(8).padStart(11, '0')}\0`, 124, 12)
  field(`${Math.floor(Date.now() / 1000).toString(8).padStart(11, '0')}\0`, 136, 12)
  field('        ', 148, 8)
  field('0', 156, 1)
  field('ustar\0', 257, 6)
  field('00', 263, 2)
  let sum = 0
  for (const byte of header) sum += byte
  field(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8)
  const padding = Buffer.alloc((512 - (body.length % 512)) % 512)
  return Buffer.concat([header, body, padding, Buffer.alloc(1024)])
}

/** The files `tar cf -` finds in every container. */
export const CONTAINER_FILES = new Map([['/etc/motd', 'welcome to the test container\n']])

function serveExec(ws: WebSocket, url: URL): void {
  const command = url.searchParams.getAll('command')
  const exitAt = command.indexOf('exit-with')
  const code = exitAt >= 0 ? Number(command[exitAt + 1] ?? 0) : 0
  const v5 = ws.protocol === 'v5.channel.k8s.io'
  const send = (channel: number, data: Buffer | string): void => {
    if (ws.readyState === ws.OPEN) ws.send(Buffer.concat([Buffer.from([channel]), Buffer.from(data)]))
  }
  let exited = false
  const exit = (): void => {
    if (exited) return
    exited = true
    send(3, exitStatus(code, command))
    ws.close(1000)
  }
  ws.on('message', (raw: Buffer) => {
    const channel = raw[0]
    const data = raw.subarray(1)
    if (channel === 0) send(1, data)
    // v5: the client's close signal for stdin.
    else if (channel === 255 && v5 && data[0] === 0) exit()
  })
  // kubectl cp reads a tar stream of the file from stdout.
  if (command[0] === 'tar' && command[1] === 'cf') {
    const file = CONTAINER_FILES.get(command[3] ?? '')
    setImmediate(() => {
      if (file === undefined) send(2, `tar: ${command[3]}: No such file or directory\n`)
      else send(1, tarOf(command[3]!, file))
      exit()
    })
    return
  }
  // Without stdin the command ends at once.
  if (url.searchParams.get('input') !== '1') setImmediate(exit)
  ws.on('close', () => {
    exited = true
  })
}

export async function startNodeAgent(clientCA: string, servingCA?: CertificateAuthority): Promise<NodeAgent> {
  const ca = servingCA ?? (await createCertificateAuthority({ commonName: 'node-agent-serving-ca' }))
  const serving = await issueServingCertificate(ca, { commonName: 'node-1', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] })
  const seen: AgentRequest[] = []
  const logs = new Map<string, string[]>()
  const redirects = new Set<string>()
  const follows = new Set<() => void>()
  const record = (req: IncomingMessage): URL => {
    const socket = req.socket as TLSSocket
    const peer = socket.getPeerCertificate()
    const cn = peer && 'subject' in peer && peer.subject ? String(peer.subject.CN) : undefined
    seen.push({ method: req.method ?? '', path: req.url ?? '', ...(cn ? { clientCommonName: cn } : {}), headers: req.headers })
    return new URL(req.url ?? '/', 'https://agent')
  }
  const server: Server = createServer(
    { cert: serving.certificate, key: serving.privateKey, ca: clientCA, requestCert: true, rejectUnauthorized: true },
    (req, res) => {
      const url = record(req)
      const logPath = /^\/containerLogs\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(url.pathname)
      if (logPath) {
        const key = logPath.slice(1).map(decodeURIComponent).join('/')
        if (redirects.has(key)) {
          res.writeHead(302, { location: 'https://elsewhere.example/steal', 'content-type': 'text/plain' }).end('moved')
          return
        }
        const lines = logs.get(key)
        if (!lines) {
          res.writeHead(404, { 'content-type': 'text/plain' }).end(`container ${logPath[3]} not found`)
          return
        }
        const tail = url.searchParams.get('tailLines')
        const shown = tail === null ? lines : lines.slice(Math.max(0, lines.length - Number(tail)))
        res.writeHead(200, { 'content-type': 'text/plain' })
        res.write(shown.map((l) => `${l}\n`).join(''))
        if (url.searchParams.get('follow') !== 'true') return void res.end()
        let n = 0
        const timer = setInterval(() => res.write(`follow ${++n}\n`), 100)
        const stop = (): void => {
          clearInterval(timer)
          follows.delete(stop)
          res.end()
        }
        follows.add(stop)
        res.on('close', stop)
        return
      }
      if (url.pathname === '/healthz') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('ok')
      if (url.pathname === '/pods') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: {}, items: [] }))
        return
      }
      if (url.pathname === '/echo') {
        const chunks: Buffer[] = []
        req.on('data', (c: Buffer) => chunks.push(c))
        req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end(`${req.method} ${url.search} ${Buffer.concat(chunks).toString()}`))
        return
      }
      res.writeHead(404, { 'content-type': 'text/plain' }).end('404 page not found')
    },
  )
  const wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (offered) => CHANNEL_PROTOCOLS.find((p) => offered.has(p)) ?? false,
  })
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = record(req)
    if (/^\/portForward\//.test(url.pathname)) return servePortForward(req, socket, head)
    if (!/^\/(exec|attach)\//.test(url.pathname) || (req.headers.upgrade ?? '').toLowerCase() !== 'websocket') {
      socket.end('HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain\r\ncontent-length: 19\r\nconnection: close\r\n\r\nunsupported upgrade')
      return
    }
    wss.handleUpgrade(req, socket, head, (ws) => serveExec(ws, url))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    servingCA: ca.certificate,
    seen,
    logs,
    redirects,
    openFollows: () => follows.size,
    close: async () => {
      for (const stop of [...follows]) stop()
      for (const ws of wss.clients) ws.terminate()
      wss.close()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/** The server's nodeAgent options for reaching `agent` with the client certificate `pair` (its serving CA trusted). */
export function nodeAgentOptions(agent: NodeAgent, pair: { certificate: string; privateKey: string }) {
  return {
    preferredAddressTypes: ['InternalIP'],
    caBundle: Buffer.from(agent.servingCA).toString('base64'),
    clientCertificate: { certificate: pair.certificate, key: pair.privateKey },
    timeoutMs: 3000,
  }
}
