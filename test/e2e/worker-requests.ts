/**
 * Requests to a daemon of `--workers`, each on a connection of its own so
 * that any worker may take it, and its worker processes: shared by the
 * workers' end-to-end tests.
 */
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { request } from 'node:https'
import { parse } from 'yaml'
import type { Daemon } from './daemon.js'

export interface Answer {
  status: number
  body: string
}

/** The admin's credentials and the server's CA from the daemon's kubeconfig. */
export function credentials(daemon: Daemon): { ca: Buffer; cert: Buffer; key: Buffer } {
  const config = parse(readFileSync(daemon.kubeconfig, 'utf8')) as {
    clusters: [{ cluster: { 'certificate-authority-data': string } }]
    users: [{ user: { 'client-certificate-data': string; 'client-key-data': string } }]
  }
  const pem = (data: string) => Buffer.from(data, 'base64')
  return {
    ca: pem(config.clusters[0].cluster['certificate-authority-data']),
    cert: pem(config.users[0].user['client-certificate-data']),
    key: pem(config.users[0].user['client-key-data']),
  }
}

/** One request on a connection of its own, so that the primary hands each to the next worker. */
export function call(daemon: Daemon, method: string, path: string, body?: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: daemon.port, method, path, agent: false, timeout: 15_000, headers: { 'content-type': 'application/json' }, ...credentials(daemon) },
      (res) => {
        let text = ''
        res.on('data', (d) => (text += String(d)))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }))
        res.on('error', reject)
      },
    )
    req.on('timeout', () => req.destroy(new Error('no answer within 15 s')))
    req.on('error', reject)
    req.end(body === undefined ? undefined : JSON.stringify(body))
  })
}

/** The pids of the daemon's worker processes (its children). */
export function workerPids(daemon: Daemon): Promise<number[]> {
  return new Promise((resolve) => {
    execFile('ps', ['-o', 'pid=', '--ppid', String(daemon.process.pid)], (_err, stdout) =>
      resolve(stdout.split('\n').map((line) => Number(line.trim())).filter((pid) => pid > 0).sort()),
    )
  })
}

export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
