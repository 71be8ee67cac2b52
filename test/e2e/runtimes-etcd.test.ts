/**
 * etcd with --kvstore-servers under Bun and under Deno: the Bun daemon
 * stores a ConfigMap under upstream's key in a real etcd, and the Deno
 * daemon, started on the same etcd, serves it to kubectl.
 */
import assert from 'node:assert/strict'
import { after, before, it } from 'node:test'
import { Etcd3 } from 'etcd3'
import { EtcdServer } from '../storage-contract/etcd-server.js'
import { Daemon } from './daemon.js'
import { BUN_DAEMON, DENO_DAEMON } from './runtime-scenario.js'

let etcd: EtcdServer | undefined
const daemons: Daemon[] = []

before(async () => {
  etcd = await EtcdServer.start()
})

after(async () => {
  await Promise.allSettled(daemons.map((d) => d.stop()))
  await etcd?.destroy()
})

it('Bun stores in etcd and Deno serves what it stored', async () => {
  const servers = [`--kvstore-servers=${etcd!.clientUrl}`]
  const bun = await Daemon.start(servers, { command: BUN_DAEMON })
  daemons.push(bun)
  await bun.ok('create', 'configmap', 'shared', '--from-literal=from=bun')

  const client = new Etcd3({ hosts: etcd!.clientUrl })
  try {
    assert.ok(await client.get('/registry/configmaps/default/shared').buffer(), 'the object is under its upstream key in etcd')
  } finally {
    client.close()
  }

  const deno = await Daemon.start(servers, { command: DENO_DAEMON })
  daemons.push(deno)
  assert.equal(await deno.ok('get', 'configmap', 'shared', '-o', 'jsonpath={.data.from}'), 'bun')
})
