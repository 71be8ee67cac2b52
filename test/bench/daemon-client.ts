/**
 * A keep-alive HTTPS client of a test daemon, as its admin (the client
 * certificate in its cert dir), for the benches that drive daemons.
 */
import { readFileSync } from 'node:fs'
import { Agent, request } from 'node:https'
import { join } from 'node:path'
import type { Daemon } from '../e2e/daemon.js'

export interface Client {
  call(method: string, path: string, body?: unknown): Promise<{ status: number; text: string }>
  close(): void
}

export function clientOf(daemon: Daemon, address = '127.0.0.1'): Client {
  const pki = daemon.certDir
  const agent = new Agent({
    keepAlive: true,
    maxSockets: 32,
    ca: readFileSync(join(pki, 'ca.crt')),
    cert: readFileSync(join(pki, 'admin.crt')),
    key: readFileSync(join(pki, 'admin.key')),
  })
  return {
    call: (method, path, body) =>
      new Promise((resolve, reject) => {
        const text = body === undefined ? undefined : JSON.stringify(body)
        const req = request({ host: address, port: daemon.port, method, path, agent, headers: { accept: 'application/json', ...(text ? { 'content-type': 'application/json' } : {}) } }, (res) => {
          let out = ''
          res.on('data', (d) => (out += String(d)))
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: out }))
        })
        req.on('error', reject)
        req.end(text)
      }),
    close: () => agent.destroy(),
  }
}
