/**
 * What upstream's own kubectl command tests found: a server-side dry-run
 * delete keeps every object (kubectl puts dryRun in the DeleteOptions
 * body), a replace of a manifest saying resourceVersion "0" goes through for
 * kinds that allow it, and discovery carries storageVersionHash.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { Daemon } from './daemon.js'

let d: Daemon

before(async () => {
  d = await Daemon.start()
})

after(async () => {
  assert.equal(await d.stop(), 0, 'the daemon exits 0 on SIGTERM')
})

const ok = (...args: string[]): Promise<string> => d.ok(...args)

const manifest = (name: string, text: string): string => d.manifest(name, text)

describe('kubectl with options in request bodies', () => {
  it('keeps a config map deleted with --dry-run=server', async () => {
    await ok('create', 'configmap', 'keep-me', '--from-literal=a=b')
    const before = await ok('get', 'configmap', 'keep-me', '-o', 'json')
    assert.equal(await ok('delete', 'configmap', 'keep-me', '--dry-run=server'), 'configmap "keep-me" deleted (server dry run)\n')
    assert.equal(await ok('get', 'configmap', 'keep-me', '-o', 'json'), before)
  })

  it('keeps every object deleted by selector across namespaces with --dry-run=server', async () => {
    await ok('create', 'namespace', 'dry-a')
    await ok('create', 'namespace', 'dry-b')
    for (const ns of ['dry-a', 'dry-b', 'default']) {
      await ok('create', 'configmap', `labelled-${ns}`, '--from-literal=a=b', '-n', ns)
      await ok('label', 'configmap', `labelled-${ns}`, 'app=dry', '-n', ns)
    }
    const out = await ok('delete', 'configmap', '-l', 'app=dry', '--all-namespaces', '--dry-run=server')
    assert.match(out, /configmap "labelled-dry-a" deleted \(server dry run\)/)
    assert.match(out, /configmap "labelled-dry-b" deleted \(server dry run\)/)
    const left = await ok('get', 'configmap', '-l', 'app=dry', '--all-namespaces', '-o', 'name')
    assert.deepEqual(left.split('\n').filter(Boolean).sort(), [
      'configmap/labelled-default',
      'configmap/labelled-dry-a',
      'configmap/labelled-dry-b',
    ])
  })

  it('deletes for real without --dry-run, as the contrast', async () => {
    await ok('create', 'configmap', 'goes', '--from-literal=a=b')
    assert.equal(await ok('delete', 'configmap', 'goes'), 'configmap "goes" deleted\n')
    const r = await d.kubectl('get', 'configmap', 'goes')
    assert.notEqual(r.code, 0)
    assert.match(r.stderr, /configmaps "goes" not found/)
  })
})

describe('kubectl replace with resourceVersion "0"', () => {
  it('replaces a node whose manifest says resourceVersion "0"', async () => {
    await ok('create', '-f', manifest('node.yaml', 'apiVersion: v1\nkind: Node\nmetadata:\n  name: node-1\n'))
    const file = manifest('node-replace.yaml', 'apiVersion: v1\nkind: Node\nmetadata:\n  name: node-1\n  resourceVersion: "0"\n  labels:\n    zone: a\n')
    assert.equal(await ok('replace', '-f', file), 'node/node-1 replaced\n')
    assert.equal(await ok('get', 'node', 'node-1', '-o', 'jsonpath={.metadata.labels.zone}'), 'a')
  })

  it('refuses to replace a lease whose manifest says resourceVersion "0", as upstream, and keeps it', async () => {
    await ok('create', '-f', manifest('lease.yaml', 'apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: lock\nspec:\n  holderIdentity: a\n'))
    // Without any resourceVersion kubectl fills in the stored one itself; "0" reaches the server.
    const file = manifest('lease-replace.yaml', 'apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: lock\n  resourceVersion: "0"\nspec:\n  holderIdentity: b\n')
    const r = await d.kubectl('replace', '-f', file)
    assert.notEqual(r.code, 0)
    assert.match(r.stderr, /metadata\.resourceVersion: Invalid value: 0x0: must be specified for an update/)
    assert.equal(await ok('get', 'lease', 'lock', '-o', 'jsonpath={.spec.holderIdentity}'), 'a')
  })
})

describe('kubectl get --raw discovery', () => {
  it('shows storageVersionHash for stored resources', async () => {
    const list = JSON.parse(await ok('get', '--raw', '/api/v1')) as { resources: { name: string; storageVersionHash?: string }[] }
    const byName = new Map(list.resources.map((r) => [r.name, r.storageVersionHash]))
    assert.equal(byName.get('pods'), 'xPOwRZ+Yhw8=')
    assert.equal(byName.get('configmaps'), 'qFsyl6wFWjQ=')
    assert.equal(byName.get('bindings'), undefined)
  })
})
