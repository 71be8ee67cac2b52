/**
 * The limit of watch delivery: a plain Node TLS server (HTTP/1.1 and HTTP/2
 * on one port, as the daemon listens) that holds every `?watch=1` request
 * open as a streamed answer and, when a create is POSTed, writes one event
 * line (made once from the posted object) to each of them, as a watch does:
 * chunked on HTTP/1.1, a DATA frame on HTTP/2. It answers the list a watch
 * starts from, so daemon-watch.ts drives it exactly as it drives a daemon;
 * what it costs per delivery is what the runtime's TLS and HTTP writing cost
 * with nothing of an API server around them.
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { Agent } from 'node:https'
import { join } from 'node:path'
import { startListening, stopChild, type TlsTarget } from './tls-targets.js'

const WATCH_LIMIT_SERVER = `
import { readFileSync } from 'node:fs'
import { createSecureServer } from 'node:http2'
const [cert, key] = process.argv.slice(2).map((f) => readFileSync(f))
const watches = new Set()
let revision = 1
const json = { 'content-type': 'application/json' }
const server = createSecureServer({ cert, key, allowHTTP1: true }, (req, res) => {
  if (req.method === 'GET' && req.url.includes('watch=1')) {
    res.writeHead(200, json)
    res.flushHeaders()
    watches.add(res)
    res.on('close', () => watches.delete(res))
    return
  }
  if (req.method === 'POST') {
    const parts = []
    req.on('data', (c) => parts.push(c))
    req.on('end', () => {
      revision++
      const line = Buffer.from('{"type":"ADDED","object":' + Buffer.concat(parts).toString() + '}\\n')
      for (const w of watches) w.write(line)
      res.writeHead(201, json)
      res.end('{}')
    })
    return
  }
  res.writeHead(200, json)
  res.end(JSON.stringify({ kind: 'List', apiVersion: 'v1', metadata: { resourceVersion: String(revision) }, items: [] }))
})
server.on('secureConnection', (socket) => socket.setNoDelay(true))
server.listen(0, '127.0.0.1', () => process.stderr.write(JSON.stringify({ port: server.address().port, url: 'watch-limit' }) + '\\n'))
process.on('SIGTERM', () => process.exit(0))
`

/** Starts the watch limit in its own process, serving the certificate a daemon wrote to `certDir`. */
export async function startWatchLimitServer(dir: string, certDir: string, maxSockets: number): Promise<TlsTarget> {
  await mkdir(dir, { recursive: true })
  const main = join(dir, 'watch-limit-server.mjs')
  await writeFile(main, WATCH_LIMIT_SERVER)
  const t0 = performance.now()
  const { child, port } = await startListening(main, [join(certDir, 'apiserver.crt'), join(certDir, 'apiserver.key')], [])
  const agent = new Agent({ keepAlive: true, maxSockets })
  return {
    label: 'the watch limit',
    port,
    pid: child.pid ?? 0,
    agent,
    readyMs: performance.now() - t0,
    stop: async () => (agent.destroy(), await stopChild(child)),
  }
}
