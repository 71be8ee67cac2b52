import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import {
  type CertificateKeyPair,
  createCertificateAuthority,
  issueClientCertificate,
  issueServingCertificate,
} from '../../core/pki/certificates.js'
import type { KubeObject } from '../../core/machinery/object.js'
import { jsonCodec } from '../../core/storage/codec.js'
import { StorageError } from '../../core/storage/interface.js'
import { MemoryStorage } from '../../core/storage/memory.js'
import { Registry } from '../../core/registry/registry.js'
import { builtinEntries } from '../../core/resources/builtin.js'
import { Catalogue, storagePath } from '../../core/resources/catalogue.js'
import { EtcdStorage } from '../../runtimes/node/storage/etcd.js'
import { readEtcdTlsFiles } from '../../runtimes/node/storage/etcd-client.js'
import {
  overrideKeyPrefix,
  overridesFactory,
  parseServersOverrides,
  StorageRouter,
} from '../../runtimes/node/storage/etcd-overrides.js'
import { EtcdServer } from './etcd-server.js'

const pod = (name: string, kind = 'Pod'): KubeObject => ({ apiVersion: 'v1', kind, metadata: { name, namespace: 'ns' } })

describe('EtcdStorage over TLS', () => {
  let etcd: EtcdServer
  let ca: string
  let client: CertificateKeyPair
  let dir: string

  before(async () => {
    const authority = await createCertificateAuthority({ commonName: 'etcd-ca' })
    const serving = await issueServingCertificate(authority, { commonName: 'etcd', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] })
    client = await issueClientCertificate(authority, { commonName: 'apiserver-etcd-client', organizations: [] })
    ca = authority.certificate
    etcd = await EtcdServer.start({ tls: { ca, cert: serving.certificate, key: serving.privateKey } })
    dir = await mkdtemp(join(tmpdir(), 'etcd-client-tls-'))
  })

  after(async () => {
    await etcd?.destroy()
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  it('talks to an etcd that requires client certificates, with the files the --kvstore-*file flags name', async (t) => {
    const files = { caFile: join(dir, 'ca.crt'), certFile: join(dir, 'client.crt'), keyFile: join(dir, 'client.key') }
    await writeFile(files.caFile, ca)
    await writeFile(files.certFile, client.certificate)
    await writeFile(files.keyFile, client.privateKey)
    const tls = await readEtcdTlsFiles(files)
    const s = new EtcdStorage({ endpoints: [etcd.clientUrl], codec: jsonCodec, tls })
    t.after(() => s.close())
    const created = await s.create('/registry/pods/ns/a', pod('a'))
    assert.deepEqual(await s.get('/registry/pods/ns/a'), created)
    const w = s.watch('/registry/pods/')
    t.after(() => w.stop())
    const events = w[Symbol.asyncIterator]()
    const first = await events.next()
    assert.equal(first.value?.object.metadata.name, 'a')
    // A later write reaches the watch through its stream, over the watches' own TLS connection.
    await s.create('/registry/pods/ns/b', pod('b'))
    const second = await events.next()
    assert.deepEqual([second.value?.type, second.value?.object.metadata.name], ['ADDED', 'b'])
    await s.checkHealth(2000)
    assert.ok((await s.dbSizeBytes(2000)) > 0, "etcd's status over TLS")
  })

  it('is refused as unavailable without a client certificate', async (t) => {
    const s = new EtcdStorage({ endpoints: [etcd.clientUrl], codec: jsonCodec, tls: { ca } })
    t.after(() => s.close())
    await assert.rejects(s.get('/registry/pods/ns/a'), (err: unknown) => err instanceof StorageError && err.code === 'Unavailable')
  })

  it('names the flag and file it cannot read', async () => {
    await assert.rejects(readEtcdTlsFiles({ caFile: join(dir, 'missing.crt') }), /^Error: --kvstore-cafile: cannot read .*missing\.crt: ENOENT/)
  })
})

describe('--kvstore-servers-overrides', () => {
  let main: EtcdServer
  let events: EtcdServer

  before(async () => {
    ;[main, events] = await Promise.all([EtcdServer.start(), EtcdServer.start()])
  })

  after(async () => {
    await Promise.all([main?.destroy(), events?.destroy()])
  })

  it('reads group/resource#servers with the core group empty and servers separated by semicolons', () => {
    assert.deepEqual(parseServersOverrides(['/events#http://127.0.0.1:2381;http://127.0.0.1:2382', 'apps/deployments#https://etcd:2379']), [
      { group: '', resource: 'events', servers: ['http://127.0.0.1:2381', 'http://127.0.0.1:2382'] },
      { group: 'apps', resource: 'deployments', servers: ['https://etcd:2379'] },
    ])
    for (const bad of ['/events/http://127.0.0.1:4002', 'events#http://x', 'a/b/c#http://x', '/events#a#b']) {
      assert.throws(() => parseServersOverrides([bad]), {
        message: '--kvstore-servers-overrides invalid, must be of format: group/resource#servers, where servers are URLs, semicolon separated',
      })
    }
  })

  it('routes each resource to where upstream keeps its keys, whatever its name', () => {
    const prefix = (spec: string) => overrideKeyPrefix('/registry', parseServersOverrides([`${spec}#http://127.0.0.1:1`])[0]!)
    assert.equal(prefix('/nodes'), '/registry/minions/')
    assert.equal(prefix('/services'), '/registry/services/specs/')
    assert.equal(prefix('/endpoints'), '/registry/services/endpoints/')
    assert.equal(prefix('/replicationcontrollers'), '/registry/controllers/')
    assert.equal(prefix('networking.k8s.io/ingresses'), '/registry/ingress/')
    assert.equal(prefix('events.k8s.io/events'), '/registry/events/')
    assert.equal(prefix('apiregistration.k8s.io/apiservices'), '/registry/apiregistration.k8s.io/apiservices/')
    assert.equal(prefix('apiextensions.k8s.io/customresourcedefinitions'), '/registry/apiextensions.k8s.io/customresourcedefinitions/')
    assert.equal(prefix('apps/deployments'), '/registry/deployments/')
    // A services override does not catch the endpoints stored beside it.
    const router = new StorageRouter(new MemoryStorage(), [{ keyPrefix: prefix('/services'), storage: new MemoryStorage() }])
    assert.notEqual(router.storageFor('/registry/services/endpoints/default/kubernetes'), router.storageFor('/registry/services/specs/default/kubernetes'))
  })

  it('gives every resource whose key differs from its name the storage of its override, in the registry', () => {
    const entries = builtinEntries(async () => ({ allowed: false }))
    const renamed = entries.filter((e) => storagePath(e) !== e.resource && !e.virtualCreate)
    assert.ok(renamed.length >= 7)
    for (const entry of renamed) {
      const main = new MemoryStorage()
      const own = new MemoryStorage()
      const [override] = parseServersOverrides([`${entry.group}/${entry.resource}#http://127.0.0.1:1`])
      const registry = new Registry(new Catalogue(entries), overridesFactory(main, [{ keyPrefix: overrideKeyPrefix('/registry', override!), storage: own }]))
      const name = `${entry.group}/${entry.resource}`
      for (const other of entries.filter((e) => !e.virtualCreate)) {
        // Resources stored under the same key (events in two groups) move together; every other stays in the main store.
        const expected = storagePath(other) === storagePath(entry) ? own : main
        assert.equal(registry.storageOf(other) === own, expected === own, `${name} override, ${other.group}/${other.resource}`)
      }
    }
  })

  it("keeps an overridden resource's objects in its own etcd and everything else in the main one", async (t) => {
    const [override] = parseServersOverrides([`/events#${events.clientUrl}`])
    const open = (servers: string[]) => new EtcdStorage({ endpoints: servers, codec: jsonCodec })
    const router = new StorageRouter(open([main.clientUrl]), [
      { keyPrefix: overrideKeyPrefix('/registry', override!), storage: open(override!.servers) },
    ])
    t.after(() => router.close())
    const w = router.watch('/registry/events/', { resourceVersion: String(await router.storageFor('/registry/events/').currentRevision()) })
    t.after(() => w.stop())

    await router.create('/registry/pods/ns/p', pod('p'))
    const event = await router.create('/registry/events/ns/e', pod('e', 'Event'))

    const keysIn = async (server: EtcdServer) => {
      const raw = server.client()
      try {
        const res = await raw.kv.range({ key: Buffer.from('/registry/'), range_end: Buffer.from('/registry0'), keys_only: true })
        return res.kvs.map((kv) => kv.key.toString())
      } finally {
        raw.close()
      }
    }
    assert.deepEqual(await keysIn(main), ['/registry/pods/ns/p'])
    assert.deepEqual(await keysIn(events), ['/registry/events/ns/e'])
    assert.deepEqual((await router.list('/registry/events/')).items, [event])
    assert.equal(await router.count('/registry/pods/'), 1)
    assert.deepEqual((await w[Symbol.asyncIterator]().next()).value?.object, event)
  })
})
