/**
 * `--workers=2` on the embedded store: both workers open the one database
 * file in --data-dir. A write taken by one worker is read at once, and
 * watched, through the other (each worker in turn is paused with SIGSTOP so
 * that the other takes every new connection); a worker killed with SIGKILL
 * while a client writes loses no acknowledged write, the client's retries get
 * through, resourceVersions keep rising, and the worker comes back; SIGTERM
 * ends both and exits 0.
 */
import assert from 'node:assert/strict'
import { request } from 'node:https'
import { after, before, describe, it } from 'node:test'
import { Daemon, eventually } from './daemon.js'
import { call, credentials, isRunning, workerPids, writeThroughWorkerKill } from './worker-requests.js'

const configMap = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { written: name } })
const CONFIGMAPS = '/api/v1/namespaces/default/configmaps'

interface WatchEvent {
  type: string
  object: { metadata: { name?: string; resourceVersion?: string } }
}

/** A watch on a connection of its own: the events as they arrive, and a way to end it. */
function watch(daemon: Daemon, path: string): Promise<{ events: WatchEvent[]; stop(): void }> {
  return new Promise((resolve, reject) => {
    const events: WatchEvent[] = []
    const req = request({ host: '127.0.0.1', port: daemon.port, method: 'GET', path, agent: false, ...credentials(daemon) }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`watch answered ${res.statusCode}`))
      let pending = ''
      res.setEncoding('utf8').on('data', (chunk: string) => {
        pending += chunk
        const lines = pending.split('\n')
        pending = lines.pop() ?? ''
        for (const line of lines) if (line.trim()) events.push(JSON.parse(line) as WatchEvent)
      })
      res.on('error', () => {})
      resolve({ events, stop: () => req.destroy() })
    })
    req.on('error', reject)
    req.end()
  })
}

/** Runs `fn` while the worker `pid` is paused, so that the other worker takes every new connection. */
async function whilePaused<T>(pid: number, fn: () => Promise<T>): Promise<T> {
  process.kill(pid, 'SIGSTOP')
  try {
    return await fn()
  } finally {
    process.kill(pid, 'SIGCONT')
  }
}

describe('--workers=2 on the embedded store', () => {
  let daemon: Daemon

  before(async () => {
    daemon = await Daemon.start(['--workers=2'])
  })
  after(async () => {
    await daemon?.stop()
  })

  it('serves from two worker processes on the one database file', async () => {
    assert.equal((await workerPids(daemon)).length, 2)
    assert.match(daemon.logs.join(''), /with 2 worker processes/)
    const created = await call(daemon, 'POST', CONFIGMAPS, configMap('first'))
    assert.equal(created.status, 201, created.body)
  })

  it('reads and watches through one worker what the other wrote, at once', async () => {
    const [one, two] = await workerPids(daemon)
    // The watch is taken by worker two, the write by worker one.
    const list = JSON.parse((await whilePaused(one!, () => call(daemon, 'GET', CONFIGMAPS))).body) as { metadata: { resourceVersion: string } }
    const watching = await whilePaused(one!, () => watch(daemon, `${CONFIGMAPS}?watch=1&resourceVersion=${list.metadata.resourceVersion}`))
    try {
      const written: string[] = []
      for (const name of ['across-1', 'across-2', 'across-3']) {
        const created = await whilePaused(two!, () => call(daemon, 'POST', CONFIGMAPS, configMap(name)))
        assert.equal(created.status, 201, created.body)
        written.push((JSON.parse(created.body) as WatchEvent['object']).metadata.resourceVersion!)
        // Read back at once through worker two: a consistent GET, and the list at resourceVersion 0 of informers.
        const got = await whilePaused(one!, () => call(daemon, 'GET', `${CONFIGMAPS}/${name}`))
        assert.equal(got.status, 200, got.body)
        assert.equal((JSON.parse(got.body) as WatchEvent['object']).metadata.resourceVersion, written.at(-1))
      }
      await eventually(() => assert.deepEqual(watching.events.map((e) => `${e.type} ${e.object.metadata.name} ${e.object.metadata.resourceVersion}`), [
        `ADDED across-1 ${written[0]}`,
        `ADDED across-2 ${written[1]}`,
        `ADDED across-3 ${written[2]}`,
      ]), 5_000)
    } finally {
      watching.stop()
    }
  })

  it('keeps every acknowledged write when a worker is killed under writes, and starts a new one', async () => {
    const { acknowledged, failures } = await writeThroughWorkerKill(daemon, CONFIGMAPS, { before: 10, after: 10 }, async () => {
      // Nothing owns the database: the surviving worker answers for the whole server, ready, while the other is gone.
      await eventually(async () => assert.equal((await call(daemon, 'GET', '/readyz')).status, 200), 5_000)
    })
    const listed = JSON.parse((await call(daemon, 'GET', CONFIGMAPS)).body) as { items: { metadata: { name: string; resourceVersion: string } }[] }
    const stored = new Map(listed.items.map((item) => [item.metadata.name, Number(item.metadata.resourceVersion)]))
    assert.deepEqual(acknowledged.filter((a) => stored.get(a.name) !== a.resourceVersion), [], `lost acknowledged writes (${failures} attempts failed)`)
    const revisions = acknowledged.map((a) => a.resourceVersion)
    assert.ok(revisions.every((rv, i) => i === 0 || rv > revisions[i - 1]!), `resourceVersions rise with each write: ${revisions.join(' ')}`)
    assert.match(daemon.logs.join(''), /worker \d exited; restarting it/)
  })

  it('ends every worker and exits 0 on SIGTERM', async () => {
    const workers = await workerPids(daemon)
    assert.equal(workers.length, 2)
    assert.equal(await daemon.terminate(), 0)
    await eventually(() => assert.deepEqual(workers.filter(isRunning), []), 5_000)
  })
})
