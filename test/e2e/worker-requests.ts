/**
 * Requests to a daemon of `--workers`, each on a connection of its own so
 * that any worker may take it, and its worker processes: shared by the
 * workers' end-to-end tests.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { request } from 'node:https'
import { parse } from 'yaml'
import { type Daemon, eventually } from './daemon.js'

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

/** A write the server acknowledged (201), with the resourceVersion it answered. */
export interface Acknowledged {
  name: string
  resourceVersion: number
}

/**
 * A client writing ConfigMaps into `path` one after another, retrying each
 * until the server answers for it (a 409 means an earlier attempt was stored
 * though its answer was lost with the connection), while the first worker
 * is killed with SIGKILL once `before` writes are acknowledged; it stops once
 * the new worker serves and `after` more went through. `whileDown` runs
 * right after the kill. Returns what was acknowledged, in order, and how
 * many attempts failed.
 */
export async function writeThroughWorkerKill(
  daemon: Daemon,
  path: string,
  counts: { before: number; after: number },
  whileDown: () => Promise<void> = async () => {},
): Promise<{ acknowledged: Acknowledged[]; failures: number }> {
  const pids = await workerPids(daemon)
  assert.equal(pids.length, 2)
  const acknowledged: Acknowledged[] = []
  let failures = 0
  let writing = true
  const writer = (async () => {
    for (let i = 0; writing || i < 5; i++) {
      const name = `loop-${i}`
      const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { written: name } }
      for (let attempt = 0; ; attempt++) {
        assert.ok(attempt < 50, `${name} never got through`)
        const answer = await call(daemon, 'POST', path, body).catch(() => undefined)
        if (answer?.status === 201 || answer?.status === 409) {
          if (answer.status === 201) acknowledged.push({ name, resourceVersion: Number((JSON.parse(answer.body) as { metadata: { resourceVersion: string } }).metadata.resourceVersion) })
          break
        }
        failures++
        await new Promise((r) => setTimeout(r, 50))
      }
    }
  })()
  try {
    await eventually(() => assert.ok(acknowledged.length >= counts.before), 20_000)
    process.kill(pids[0]!, 'SIGKILL')
    await whileDown()
    await eventually(async () => {
      const now = await workerPids(daemon)
      assert.equal(now.length, 2, `workers: ${now.join(' ')}`)
      assert.ok(!now.includes(pids[0]!), 'the killed worker is gone')
      assert.ok(now.includes(pids[1]!), 'the other worker still serves')
    }, 20_000)
    // Two first starts and the new worker's: it serves again.
    await eventually(() => assert.equal(daemon.logs.join('').match(/worker \d serving on /g)?.length, 3), 30_000)
    const afterRestart = acknowledged.length
    await eventually(() => assert.ok(acknowledged.length >= afterRestart + counts.after), 20_000)
  } finally {
    writing = false
    await writer
  }
  return { acknowledged, failures }
}
