/**
 * `--event-ttl` through the daemon on both stores: an event created with
 * kubectl is gone after a short time to live, on the embedded store (its own
 * expiry) and on etcd (leases), while a ConfigMap stays.
 */
import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { EtcdServer } from '../storage-contract/etcd-server.js'
import { Daemon } from './daemon.js'

const EVENT = JSON.stringify({
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { name: 'short-lived', namespace: 'default' },
  involvedObject: { kind: 'Pod', name: 'web', namespace: 'default' },
  reason: 'Started',
  message: 'Started container',
})

async function eventually(what: string, check: () => Promise<boolean>, deadlineMs = 60_000): Promise<void> {
  const end = Date.now() + deadlineMs
  while (!(await check())) {
    if (Date.now() > end) assert.fail(`timed out waiting until ${what}`)
    await new Promise((r) => setTimeout(r, 500))
  }
}

async function expiresEvents(daemon: Daemon): Promise<void> {
  await daemon.ok('create', '-f', daemon.manifest('event.json', EVENT))
  await daemon.ok('create', 'configmap', 'stays', '-n', 'default', '--from-literal=a=b')
  await daemon.ok('get', 'event', 'short-lived', '-n', 'default')
  await eventually('the event is gone', async () => (await daemon.kubectl('get', 'event', 'short-lived', '-n', 'default')).code !== 0)
  await daemon.ok('get', 'configmap', 'stays', '-n', 'default')
}

describe('--event-ttl', () => {
  let daemon: Daemon | undefined
  let etcd: EtcdServer | undefined
  after(async () => {
    await daemon?.stop()
    await etcd?.destroy()
  })

  it('expires events on the embedded store', async () => {
    daemon = await Daemon.start(['--event-ttl=3s'])
    await expiresEvents(daemon)
    await daemon.stop()
    daemon = undefined
  })

  it('expires events on etcd', async () => {
    etcd = await EtcdServer.start()
    daemon = await Daemon.start([`--etcd-servers=${etcd.clientUrl}`, '--event-ttl=5s'])
    await expiresEvents(daemon)
  })
})
