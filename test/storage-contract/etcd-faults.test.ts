import assert from 'node:assert/strict'
import { createServer } from 'node:net'
import { after, before, describe, it } from 'node:test'
import type { KubeObject } from '../../core/machinery/object.js'
import { jsonCodec } from '../../core/storage/codec.js'
import { StorageError, type StorageEvent } from '../../core/storage/interface.js'
import { EtcdStorage } from '../../runtimes/node/storage/etcd.js'
import { waitForStorage } from '../../runtimes/node/storage/etcd-health.js'
import { EtcdServer } from './etcd-server.js'

let etcd: EtcdServer

before(async () => {
  etcd = await EtcdServer.start()
})

after(async () => {
  await etcd?.destroy()
})

const pod = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns' }, spec: {} })

/** Bounds every wait, so a hang fails the test instead of stalling it. */
async function within<T>(promise: Promise<T>, what: string, ms = 10000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms)
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}

function isUnavailable(err: unknown): boolean {
  assert.ok(err instanceof StorageError, `expected a StorageError, got ${String(err)}`)
  assert.equal(err.code, 'Unavailable')
  assert.match(err.message, new RegExp(`^etcd is unavailable \\(${etcd.clientUrl.replace(/\./g, '\\.')}\\): `))
  return true
}

/** Repeats `attempt` until it resolves (etcd coming back), for at most `ms`. */
async function eventually<T>(attempt: () => Promise<T>, ms = 15000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    try {
      return await attempt()
    } catch (err) {
      if (Date.now() > deadline) throw err
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
}

describe('EtcdStorage while etcd goes away and comes back', () => {
  it('fails requests with Unavailable during the outage, then serves again with the same store, and its watch loses nothing', async (t) => {
    const s = new EtcdStorage({ endpoints: [etcd.clientUrl], codec: jsonCodec, requestTimeoutMs: 2000 })
    t.after(() => s.close())
    await s.create('/registry/pods/ns/before', pod('before'))
    const w = s.watch('/registry/pods/', { resourceVersion: String(await s.currentRevision()) })
    t.after(() => w.stop())
    const events = w[Symbol.asyncIterator]()

    await etcd.pause()
    const outage = Date.now()
    for (const attempt of [
      (): Promise<unknown> => s.get('/registry/pods/ns/before'),
      () => s.create('/registry/pods/ns/lost', pod('lost')),
      () => s.list('/registry/pods/'),
      () => s.guaranteedUpdate('/registry/pods/ns/before', (cur) => ({ ...cur, spec: { changed: true } })),
      () => s.delete('/registry/pods/ns/before'),
      () => s.currentRevision(),
    ]) {
      await assert.rejects(within(attempt(), 'an answer during the outage'), isUnavailable)
    }
    t.diagnostic(`six requests failed within ${Date.now() - outage}ms`)
    await assert.rejects(within(s.checkHealth(1000), 'the health check'), /^Error: error getting data from etcd: /)

    await etcd.resume()
    const restarted = Date.now()
    const back = await eventually(() => s.create('/registry/pods/ns/after', pod('after')))
    t.diagnostic(`the store served again ${Date.now() - restarted}ms after etcd restarted`)
    await s.checkHealth(1000)
    assert.equal(await s.get('/registry/pods/ns/lost'), undefined, 'the write refused during the outage left nothing behind')
    assert.deepEqual((await s.get('/registry/pods/ns/before'))?.spec, {}, 'the refused update changed nothing')

    const resumed = (await within(events.next(), 'the resumed watch')).value as StorageEvent
    assert.equal(
      `${resumed.type} ${resumed.object.metadata.name} ${resumed.revision}`,
      `ADDED after ${back.metadata.resourceVersion}`,
      'the watch resumed where it stopped',
    )
    const later = await s.create('/registry/pods/ns/later', pod('later'))
    const live = (await within(events.next(), 'a live event')).value as StorageEvent
    assert.equal(live.object.metadata.resourceVersion, later.metadata.resourceVersion)
  })

  it('waits at start-up until etcd answers, and gives up with the reason after the initialization timeout', async (t) => {
    const s = new EtcdStorage({ endpoints: [etcd.clientUrl], codec: jsonCodec })
    t.after(() => s.close())
    await etcd.pause()
    await assert.rejects(
      waitForStorage((ms) => s.checkHealth(ms), { timeoutMs: 300, checkTimeoutMs: 100, retryMs: 50 }),
      /^Error: storage was not ready within 300ms: error getting data from etcd: /,
    )
    const waiting = waitForStorage((ms) => s.checkHealth(ms), { timeoutMs: 15000, checkTimeoutMs: 500, retryMs: 100 })
    await etcd.resume()
    await within(waiting, 'storage to become ready', 16000)
  })
})

describe('EtcdStorage with one of its members down', () => {
  /** A loopback port nothing listens on: a member that is down. */
  const closedPort = (): Promise<number> =>
    new Promise((resolve, reject) => {
      const server = createServer()
      server.once('error', reject)
      server.listen(0, '127.0.0.1', () => {
        const address = server.address()
        server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))))
      })
    })

  it('sends each call to a member that is up, so none fails', async (t) => {
    const down = `http://127.0.0.1:${await closedPort()}`
    const s = new EtcdStorage({ endpoints: [down, etcd.clientUrl, down], codec: jsonCodec, requestTimeoutMs: 5000 })
    t.after(() => s.close())
    // Enough calls that each one meets the member that is down first many times over.
    for (let i = 0; i < 30; i++) {
      const created = await within(s.create(`/registry/pods/ns/member-down-${i}`, pod(`member-down-${i}`)), 'a create')
      const read = await within(s.get(`/registry/pods/ns/member-down-${i}`), 'a read')
      assert.equal(read?.metadata.resourceVersion, created.metadata.resourceVersion)
    }
    assert.equal((await s.list('/registry/pods/ns/')).items.filter((p) => p.metadata.name?.startsWith('member-down-')).length, 30)
  })

  it('opens each watch on a member that is up, whichever member its first stream went to', async (t) => {
    const down = `http://127.0.0.1:${await closedPort()}`
    const s = new EtcdStorage({ endpoints: [down, etcd.clientUrl, down], codec: jsonCodec, requestTimeoutMs: 5000 })
    t.after(() => s.close())
    const from = (await s.create('/registry/pods/watched/start', pod('start'))).metadata.resourceVersion!
    // Several watches, so that their first streams go to every member in turn.
    const watches = Array.from({ length: 4 }, () => s.watch('/registry/pods/watched/', { resourceVersion: from }))
    t.after(() => watches.forEach((w) => w.stop()))
    const created = await s.create('/registry/pods/watched/after', pod('after'))
    for (const w of watches) {
      const next = await within(w[Symbol.asyncIterator]().next(), 'a watch event')
      const event = next.value as StorageEvent
      assert.deepEqual([event.type, event.object.metadata.name, event.revision], ['ADDED', 'after', Number(created.metadata.resourceVersion)])
    }
  })
})
