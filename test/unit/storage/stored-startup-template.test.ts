import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { beginStoredStartup, type StoredTemplateTarget } from '../../../core/storage/stored-startup-template.js'
import type { KubeObject } from '../../../core/machinery/object.js'
import type { StartupTemplateFiles } from '../../../core/ports.js'
import { singleStorage } from '../../../core/storage/factory.js'
import type { Storage } from '../../../core/storage/interface.js'
import { MemoryStorage } from '../../../core/storage/memory.js'
import { silentLogger } from '../../../core/logging/logger.js'

const ROOT = '/registry'
const STARTED = Date.parse('2026-01-10T08:00:00Z')
const FINISHED = STARTED + 2000

/** Files in a Map, as the daemon keeps them beside its script. */
function memoryFiles(): StartupTemplateFiles & { texts: Map<string, string> } {
  const texts = new Map<string, string>()
  return { texts, read: (key) => texts.get(key), write: (key, text) => void texts.set(key, text) }
}

function target(storage: Storage, files: StartupTemplateFiles, at: number, warnings: string[] = []): StoredTemplateTarget {
  return {
    storage,
    factory: singleStorage(storage),
    root: ROOT,
    files,
    key: 'settings',
    startedAt: at,
    now: () => new Date(at + 500),
    logger: { ...silentLogger, warn: (_fields, message) => void warnings.push(message) },
  }
}

const NAMESPACES = { group: '', resource: 'namespaces', prefix: `${ROOT}/namespaces/` }
const ACCOUNTS = { group: '', resource: 'serviceaccounts', prefix: `${ROOT}/serviceaccounts/` }
const LEASES = { group: 'coordination.k8s.io', resource: 'leases', prefix: `${ROOT}/leases/` }
const SLICES = { group: 'discovery.k8s.io', resource: 'endpointslices', prefix: `${ROOT}/endpointslices/` }
const CONFIGMAPS = { group: '', resource: 'configmaps', prefix: `${ROOT}/configmaps/` }

const NS_UID = '0d3b1c5e-0000-4000-8000-000000000001'
const created = new Date(STARTED + 300).toISOString().replace(/\.\d{3}Z$/, 'Z')
const renewed = '2026-01-10T08:00:01.250000Z'
const longAgo = '2020-05-01T00:00:00Z'

/** What a first start on the empty store writes, through the factory it was given. */
async function firstStartUp(factory: { storageFor: (r: typeof NAMESPACES) => Storage }): Promise<void> {
  await factory.storageFor(NAMESPACES).create(`${ROOT}/namespaces/kube-system`, {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'kube-system', uid: NS_UID, creationTimestamp: created, managedFields: [{ manager: 'kube-apiserver', time: created }] },
    status: { phase: 'Active' },
  })
  await factory.storageFor(ACCOUNTS).create(`${ROOT}/serviceaccounts/kube-system/default`, {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: {
      name: 'default',
      namespace: 'kube-system',
      uid: '0d3b1c5e-0000-4000-8000-000000000002',
      creationTimestamp: created,
      // A reference to another kept object's uid, and a time from before the start that is data, not start-up's.
      annotations: { 'example.com/namespace-uid': NS_UID, 'example.com/since': longAgo, 'example.com/renewed': renewed },
    },
  })
  // Each server's own: not kept.
  await factory.storageFor(LEASES).create(`${ROOT}/leases/kube-system/apiserver-abc`, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'apiserver-abc', namespace: 'kube-system' } })
  await factory.storageFor(SLICES).create(`${ROOT}/endpointslices/default/kubernetes`, { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'kubernetes', namespace: 'default' } })
  // The day this cluster began tracking legacy tokens: a cluster begun from the template writes its own.
  await factory.storageFor(CONFIGMAPS).create(`${ROOT}/configmaps/kube-system/kube-apiserver-legacy-service-account-token-tracking`, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'kube-apiserver-legacy-service-account-token-tracking', namespace: 'kube-system' },
    data: { since: '2026-01-10' },
  })
}

async function keys(storage: Storage): Promise<string[]> {
  const found: string[] = []
  for (const r of [NAMESPACES, ACCOUNTS, LEASES, SLICES]) {
    for (const obj of (await storage.list(r.prefix)).items) found.push(`${r.prefix}${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata.name}`)
  }
  return found.sort()
}

describe('start-up templates on a persistent store', () => {
  it('a first start on an empty store keeps what its start-up stored, but for what each server writes for itself', async () => {
    const files = memoryFiles()
    const store = new MemoryStorage()
    const startup = await beginStoredStartup(target(store, files, STARTED))
    assert.equal(startup.written, 0)
    await firstStartUp(startup.factory)
    await (await startup.startupDone())()
    const kept = JSON.parse(files.texts.get('settings')!) as { objects: [string, KubeObject][] }
    assert.deepEqual(kept.objects.map(([key]) => key).sort(), [`${ROOT}/namespaces/kube-system`, `${ROOT}/serviceaccounts/kube-system/default`])
    for (const [, obj] of kept.objects) assert.equal(obj.metadata.resourceVersion, undefined)
  })

  it("keeps the state start-up left, not what clients wrote after it, nor what changed since", async () => {
    const files = memoryFiles()
    const store = new MemoryStorage()
    const startup = await beginStoredStartup(target(store, files, STARTED))
    await firstStartUp(startup.factory)
    const keep = await startup.startupDone()
    // Served: a client's namespace, and a change to one of start-up's objects.
    await startup.factory.storageFor(NAMESPACES).create(`${ROOT}/namespaces/clients-own`, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'clients-own' } })
    await store.guaranteedUpdate(`${ROOT}/namespaces/kube-system`, (ns) => ({ ...ns, metadata: { ...ns.metadata, labels: { changed: 'later' } } }))
    await keep()
    const kept = JSON.parse(files.texts.get('settings')!) as { objects: [string, KubeObject][] }
    assert.deepEqual(kept.objects.map(([key]) => key).sort(), [`${ROOT}/namespaces/kube-system`, `${ROOT}/serviceaccounts/kube-system/default`])
    assert.equal(kept.objects.find(([key]) => key.endsWith('kube-system'))![1].metadata.labels, undefined)
  })

  it('a later start on another empty store writes the template with new uids and the times of its own start', async () => {
    const files = memoryFiles()
    const first = await beginStoredStartup(target(new MemoryStorage(), files, STARTED))
    await firstStartUp(first.factory)
    await (await first.startupDone())()

    const later = STARTED + 86_400_000
    const store = new MemoryStorage()
    const startup = await beginStoredStartup(target(store, files, later))
    assert.equal(startup.written, 2)
    assert.deepEqual(await keys(store), [`${ROOT}/namespaces/kube-system`, `${ROOT}/serviceaccounts/kube-system/default`])
    const ns = (await store.get(`${ROOT}/namespaces/kube-system`))!
    const account = (await store.get(`${ROOT}/serviceaccounts/kube-system/default`))!
    assert.notEqual(ns.metadata.uid, NS_UID)
    assert.match(String(ns.metadata.uid), /^[0-9a-f-]{36}$/)
    assert.notEqual(account.metadata.uid, ns.metadata.uid)
    // The reference follows the new uid; the time from before the template's start stays as it was.
    assert.equal(account.metadata.annotations!['example.com/namespace-uid'], ns.metadata.uid)
    assert.equal(account.metadata.annotations!['example.com/since'], longAgo)
    const now = new Date(later + 500)
    assert.equal(ns.metadata.creationTimestamp, now.toISOString().replace(/\.\d{3}Z$/, 'Z'))
    assert.deepEqual((ns.metadata.managedFields as { time: string }[]).map((f) => f.time), [ns.metadata.creationTimestamp])
    // Microseconds stay microseconds.
    assert.equal(account.metadata.annotations!['example.com/renewed'], `${now.toISOString().slice(0, 23)}000Z`)
    // Nothing is kept again by a start that began from a template.
    files.texts.clear()
    await (await startup.startupDone())()
    assert.equal(files.texts.size, 0)
  })

  it('a store that holds anything is left as it is, and nothing is kept from it', async () => {
    const files = memoryFiles()
    files.texts.set('settings', JSON.stringify({ format: 1, from: STARTED, to: FINISHED, objects: [[`${ROOT}/namespaces/extra`, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'extra' } }]] }))
    const store = new MemoryStorage()
    await store.create(`${ROOT}/namespaces/default`, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } })
    const startup = await beginStoredStartup(target(store, files, STARTED))
    assert.equal(startup.written, 0)
    assert.equal(await store.get(`${ROOT}/namespaces/extra`), undefined)
    await (await startup.startupDone())()
    assert.match(files.texts.get('settings')!, /extra/, 'the template is left as it was')
  })

  it('text that is not a template is not used: the start bootstraps in full and keeps its own', async () => {
    for (const text of ['{"format":1,"from":0,"to":0,"objects":[["k", 3]]}', '{"format":2,"from":0,"to":0,"objects":[]}', '{"format":1', 'null']) {
      const files = memoryFiles()
      files.texts.set('settings', text)
      const store = new MemoryStorage()
      const startup = await beginStoredStartup(target(store, files, STARTED))
      assert.equal(startup.written, 0, text)
      assert.equal(await store.count(`${ROOT}/`), 0, text)
      await firstStartUp(startup.factory)
      await (await startup.startupDone())()
      assert.notEqual(files.texts.get('settings'), text)
    }
  })

  it('stops at a key another server took meanwhile, and leaves that object as the other server wrote it', async () => {
    const files = memoryFiles()
    const first = await beginStoredStartup(target(new MemoryStorage(), files, STARTED))
    await firstStartUp(first.factory)
    await (await first.startupDone())()

    const theirs: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-system', uid: 'theirs' } }
    // Empty when this start looked; the other server's namespace arrives before the template's.
    class Racing extends MemoryStorage {
      override async count(): Promise<number> {
        await this.create(`${ROOT}/namespaces/kube-system`, theirs)
        return 0
      }
    }
    const store = new Racing()
    const warnings: string[] = []
    const startup = await beginStoredStartup(target(store, files, STARTED + 10_000, warnings))
    assert.ok(startup.written <= 1)
    assert.equal((await store.get(`${ROOT}/namespaces/kube-system`))!.metadata.uid, 'theirs')
    assert.deepEqual(warnings, [], 'a key taken is no failure')
  })
  it("answers each resource's first list from the template it wrote whole, as the store would, until the store moves on", async () => {
    const files = memoryFiles()
    const first = await beginStoredStartup(target(new MemoryStorage(), files, STARTED))
    await firstStartUp(first.factory)
    await (await first.startupDone())()

    const lists: string[] = []
    class Counted extends MemoryStorage {
      override list(prefix: string, opts?: Parameters<Storage['list']>[1]) {
        lists.push(prefix)
        return super.list(prefix, opts)
      }
    }
    const store = new Counted()
    const startup = await beginStoredStartup(target(store, files, STARTED + 86_400_000))
    assert.equal(startup.written, 2)
    const namespaces = startup.factory.storageFor(NAMESPACES)
    const accounts = startup.factory.storageFor(ACCOUNTS)
    const [ns, sa] = await Promise.all([namespaces.list(NAMESPACES.prefix, { readOnly: true }), accounts.list(ACCOUNTS.prefix, { limit: 10 })])
    assert.deepEqual(lists, [], 'answered without the store')
    // Exactly what the store holds, resourceVersions and the list's revision included.
    assert.deepEqual(ns, await store.list(NAMESPACES.prefix))
    assert.deepEqual(sa, await store.list(ACCOUNTS.prefix))
    lists.length = 0
    // A second list of a resource, a selective one, or one after a write, reaches the store.
    await namespaces.list(NAMESPACES.prefix)
    await accounts.list(ACCOUNTS.prefix, { predicate: () => true })
    assert.deepEqual(lists, [NAMESPACES.prefix, ACCOUNTS.prefix])
    await store.create(`${ROOT}/leases/kube-system/apiserver-xyz`, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'apiserver-xyz', namespace: 'kube-system' } })
    const leases = await startup.factory.storageFor(LEASES).list(LEASES.prefix)
    assert.equal(leases.items.length, 1)
    assert.deepEqual(lists.at(-1), LEASES.prefix)
  })

  it('answers nothing from a template another writer interleaved with: every list reaches the store', async () => {
    const files = memoryFiles()
    const first = await beginStoredStartup(target(new MemoryStorage(), files, STARTED))
    await firstStartUp(first.factory)
    await (await first.startupDone())()
    // Another server writes an object of its own between the look at the store and the template's writes.
    class Interleaved extends MemoryStorage {
      listed = 0
      override async count(prefix: string): Promise<number> {
        const found = await super.count(prefix)
        await this.create(`${ROOT}/leases/kube-system/other`, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'other', namespace: 'kube-system' } })
        return found
      }
      override list(prefix: string, opts?: Parameters<Storage['list']>[1]) {
        this.listed++
        return super.list(prefix, opts)
      }
    }
    const store = new Interleaved()
    const startup = await beginStoredStartup(target(store, files, STARTED + 10_000))
    assert.equal(startup.written, 2)
    const ns = await startup.factory.storageFor(NAMESPACES).list(NAMESPACES.prefix)
    assert.equal(store.listed, 1)
    assert.equal(ns.items.length, 1)
  })
})
