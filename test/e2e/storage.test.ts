/**
 * The daemon's storage end to end: the embedded store keeps every write
 * kubectl saw acknowledged across a restart and a kill -9, and kubectl works
 * the same against a real etcd as against the embedded store.
 */
import assert from 'node:assert/strict'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { EtcdServer } from '../storage-contract/etcd-server.js'
import { Daemon, eventually } from './daemon.js'

/** A minimal CustomResourceDefinition: custom resources must outlive a restart and reach every server of one etcd. */
const WIDGETS = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.demo.example.com}
spec:
  group: demo.example.com
  scope: Namespaced
  names: {plural: widgets, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {size: {type: integer}}}}}}
`
const widget = (name: string) => `{"apiVersion":"demo.example.com/v1","kind":"Widget","metadata":{"name":"${name}"},"spec":{"size":3}}`

function file(daemon: Daemon, name: string, text: string): string {
  const path = join(daemon.dir, name)
  writeFileSync(path, text)
  return path
}

async function ok(daemon: Daemon, ...args: string[]): Promise<string> {
  const r = await daemon.kubectl(...args)
  assert.equal(r.code, 0, `kubectl ${args.join(' ')} failed: ${r.stderr}\n${daemon.logs.join('')}`)
  return r.stdout
}

describe('daemon storage', () => {
  it('keeps acknowledged writes in the embedded store across a restart and a kill -9', async () => {
    const first = await Daemon.start()
    const dir = first.dir
    try {
      await ok(first, 'create', 'namespace', 'durable')
      await ok(first, 'apply', '-f', file(first, 'widgets.yaml', WIDGETS))
      await ok(first, 'wait', '--for', 'condition=established', 'crd/widgets.demo.example.com')
      await ok(first, 'create', '-n', 'durable', '-f', file(first, 'w.json', widget('kept')))
      for (let i = 0; i < 20; i++) await ok(first, 'create', 'configmap', `cm-${i}`, '-n', 'durable', `--from-literal=i=${i}`)
      const before = JSON.parse(await ok(first, 'get', 'configmap', 'cm-19', '-n', 'durable', '-o', 'json')) as {
        metadata: { resourceVersion: string; uid: string }
      }
      await first.kill()

      const second = await Daemon.start([], { dir })
      try {
        const names = (await ok(second, 'get', 'configmaps', '-n', 'durable', '-o', 'name')).trim().split('\n').sort()
        assert.equal(names.filter((n) => n.startsWith('configmap/cm-')).length, 20)
        const after = JSON.parse(await ok(second, 'get', 'configmap', 'cm-19', '-n', 'durable', '-o', 'json')) as {
          metadata: { resourceVersion: string; uid: string }
        }
        assert.deepEqual(after.metadata, { ...after.metadata, uid: before.metadata.uid, resourceVersion: before.metadata.resourceVersion })
        // The revision carries on: a new write gets a higher resourceVersion.
        await ok(second, 'create', 'configmap', 'after-crash', '-n', 'durable')
        const created = JSON.parse(await ok(second, 'get', 'configmap', 'after-crash', '-n', 'durable', '-o', 'json')) as {
          metadata: { resourceVersion: string }
        }
        assert.ok(Number(created.metadata.resourceVersion) > Number(before.metadata.resourceVersion))
        assert.match(second.logs.join(''), /objects are stored in the embedded store/)
        // Custom resources are served again from the first request on.
        assert.equal(await ok(second, 'get', 'widgets', 'kept', '-n', 'durable', '-o', 'jsonpath={.spec.size}'), '3')
      } finally {
        await second.stop()
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  describe('on etcd', () => {
    let etcd: EtcdServer | undefined
    let daemon: Daemon | undefined
    after(async () => {
      await daemon?.stop()
      await etcd?.destroy()
    })

    it('serves kubectl the same as the embedded store', async () => {
      etcd = await EtcdServer.start()
      daemon = await Daemon.start([`--etcd-servers=${etcd.clientUrl}`])
      assert.match(daemon.logs.join(''), /objects are stored in etcd at/)
      await ok(daemon, 'create', 'namespace', 'on-etcd')
      await ok(daemon, 'create', 'configmap', 'settings', '-n', 'on-etcd', '--from-literal=mode=fast')
      assert.match(await ok(daemon, 'get', 'configmap', 'settings', '-n', 'on-etcd', '-o', 'jsonpath={.data.mode}'), /^fast$/)
      assert.match(await ok(daemon, 'get', 'configmaps', '-n', 'on-etcd'), /settings\s+1\s+/)
      await ok(daemon, 'delete', 'configmap', 'settings', '-n', 'on-etcd')
      const gone = await daemon.kubectl('get', 'configmap', 'settings', '-n', 'on-etcd')
      assert.notEqual(gone.code, 0)
      assert.match(gone.stderr, /configmaps "settings" not found/)
    })

    it('reports etcd and the components upstream checks in kubectl get componentstatuses', async () => {
      assert.ok(daemon, 'the previous case started the daemon on etcd')
      const rows = (await ok(daemon, 'get', 'componentstatuses', '--no-headers')).trim().split('\n')
      const statusOf = (name: string) => rows.find((r) => r.startsWith(`${name} `))?.split(/\s+/)[1]
      assert.equal(statusOf('etcd-0'), 'Healthy', rows.join('\n'))
      // No controller manager or scheduler runs beside the daemon here: upstream shows them Unhealthy.
      assert.equal(statusOf('scheduler'), 'Unhealthy', rows.join('\n'))
      assert.equal(statusOf('controller-manager'), 'Unhealthy', rows.join('\n'))
      const etcd = JSON.parse(await ok(daemon, 'get', 'cs', 'etcd-0', '-o', 'json')) as { conditions: unknown[] }
      assert.deepEqual(etcd.conditions, [{ type: 'Healthy', status: 'True', message: 'ok' }])
    })

    it('serves a custom resource defined through one server from another on the same etcd', async () => {
      assert.ok(etcd && daemon, 'the previous case started etcd and the daemon')
      const other = await Daemon.start([`--etcd-servers=${etcd.clientUrl}`])
      try {
        await ok(daemon, 'apply', '-f', file(daemon, 'widgets.yaml', WIDGETS))
        await ok(daemon, 'wait', '--for', 'condition=established', 'crd/widgets.demo.example.com')
        await eventually(async () => {
          assert.equal((await other.kubectl('create', '-n', 'on-etcd', '-f', file(other, 'w.json', widget('shared')))).code, 0)
        })
        // Both servers' definition controllers reconcile the same object; the first may be between two of its versions.
        await eventually(async () => assert.equal(await ok(daemon!, 'get', 'widget', 'shared', '-n', 'on-etcd', '-o', 'jsonpath={.spec.size}'), '3'))
        await ok(other, 'delete', 'crd', 'widgets.demo.example.com')
        await eventually(async () => {
          const gone = await daemon!.kubectl('get', 'widgets', '-n', 'on-etcd', '--cache-dir', join(daemon!.dir, `cache-${Date.now()}`))
          assert.match(gone.stderr, /the server doesn't have a resource type "widgets"/)
        })
      } finally {
        await other.stop()
      }
    })

    it('fails /readyz and answers requests with a Status while etcd is down, and recovers by itself', async () => {
      assert.ok(etcd && daemon, 'the previous case started etcd and the daemon')
      await ok(daemon, 'create', 'configmap', 'before-outage', '-n', 'on-etcd')
      await etcd.pause()
      const ready = await daemon.kubectl('get', '--raw', '/readyz?verbose')
      assert.notEqual(ready.code, 0, 'readyz fails while etcd is down')
      assert.match(ready.stdout + ready.stderr, /\[-\]etcd failed/)
      const write = await daemon.kubectl('create', 'configmap', 'during-outage', '-n', 'on-etcd')
      assert.notEqual(write.code, 0)
      assert.match(write.stderr, /etcd is unavailable|Service Unavailable|Timeout/i)
      await etcd.resume()
      await eventually(async () => {
        assert.equal((await daemon!.kubectl('get', '--raw', '/readyz')).stdout, 'ok')
      }, 20_000)
      const names = await ok(daemon, 'get', 'configmaps', '-n', 'on-etcd', '-o', 'name')
      assert.match(names, /configmap\/before-outage/)
      assert.doesNotMatch(names, /during-outage/, 'the refused write left nothing behind')
    })
  })
})
