import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { claimOwners, newPod, parentAndOrdinal } from '../../../../core/controllers/workloads/statefulset-pods.js'
import { goJson, templateOf, templatePatch } from '../../../../core/controllers/workloads/revision-patch.js'
import { fnv32, newRevision, revisionHash } from '../../../../core/controllers/workloads/statefulset-revisions.js'
import type { KubeObject } from '../../../../core/machinery/object.js'

const set = (spec: Record<string, unknown> = {}, annotations?: Record<string, string>): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: { name: 'web', namespace: 'default', uid: 'set-uid', ...(annotations ? { annotations } : {}) },
  spec: { serviceName: 'nginx', selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } }, ...spec },
})

describe('StatefulSet revisions', () => {
  it('stores the template as a replacing patch, written as Go writes a decoded map', () => {
    const patch = templatePatch({ metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'a<b>&' }] } })
    assert.equal(
      goJson(patch),
      '{"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null,"labels":{"app":"web"}},"spec":{"containers":[{"image":"a\\u003cb\\u003e\\u0026","name":"c"}]}}}}',
    )
    assert.deepEqual(templateOf({ metadata: {}, data: patch }), { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'a<b>&' }] } })
  })

  it('hashes with 32-bit FNV-1 (not 1a) over the patch, then the collision count, in the safe alphabet', () => {
    const bytes = (text: string) => new TextEncoder().encode(text)
    assert.equal(fnv32(bytes('a')), 0x050c5d7e)
    assert.equal(fnv32(bytes('foobar')), 0x31f0b262)
    const alphabet = 'bcdfghjklmnpqrstvwxz2456789'
    const patch = { spec: { template: { $patch: 'replace' } } }
    const hash = fnv32(bytes('7'), fnv32(bytes('{"spec":{"template":{"$patch":"replace"}}}')))
    assert.equal(revisionHash(patch, 7), [...String(hash)].map((c) => alphabet[c.charCodeAt(0) % alphabet.length]).join(''))
    assert.notEqual(revisionHash(patch, 0), revisionHash(patch, 1))
  })

  it('names the revision after the set and the hash, with the template labels, the hash label and the set annotations', () => {
    const revision = newRevision(set({}, { note: 'x' }), { metadata: { labels: { app: 'web' } } }, 4, 0)
    const hash = revision.metadata.labels?.['controller.kubernetes.io/hash']
    assert.equal(revision.metadata.name, `web-${hash}`)
    assert.deepEqual(revision.metadata.labels, { app: 'web', 'controller.kubernetes.io/hash': hash })
    assert.deepEqual(revision.metadata.annotations, { note: 'x' })
    assert.equal(revision['revision'], 4)
    assert.equal(revision.metadata.ownerReferences?.[0]?.controller, true)
  })
})

describe('StatefulSet pods', () => {
  it('reads the parent and ordinal off a name', () => {
    assert.deepEqual(parentAndOrdinal({ metadata: { name: 'my-db-12' } }), { parent: 'my-db', ordinal: 12 })
    assert.deepEqual(parentAndOrdinal({ metadata: { name: 'db' } }), { parent: '', ordinal: -1 })
  })

  it('mounts each claim template in place of a template volume of the same name', () => {
    const s = set({ volumeClaimTemplates: [{ metadata: { name: 'data' } }] })
    const pod = newPod(s, { metadata: { labels: { app: 'web' } }, spec: { containers: [], volumes: [{ name: 'data', emptyDir: {} }, { name: 'tmp', emptyDir: {} }] } }, 2, 'web-abc')
    assert.deepEqual((pod['spec'] as Record<string, unknown>)['volumes'], [{ name: 'data', persistentVolumeClaim: { claimName: 'data-web-2' } }, { name: 'tmp', emptyDir: {} }])
    assert.equal((pod['spec'] as Record<string, unknown>)['hostname'], 'web-2')
    assert.equal((pod['spec'] as Record<string, unknown>)['subdomain'], 'nginx')
  })

  it('gives a claim owners by the retention policy', () => {
    const claim: KubeObject = { metadata: { name: 'data-web-2' } }
    const pod: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-2', uid: 'pod-uid' } }
    const owners = (policy: Record<string, string>, replicas: number) => claimOwners(claim, set({ replicas, persistentVolumeClaimRetentionPolicy: policy }), pod)?.map((r) => r.uid)
    assert.deepEqual(owners({ whenDeleted: 'Retain', whenScaled: 'Retain' }, 1), [])
    assert.deepEqual(owners({ whenDeleted: 'Delete', whenScaled: 'Retain' }, 1), ['set-uid'])
    assert.deepEqual(owners({ whenDeleted: 'Retain', whenScaled: 'Delete' }, 3), [])
    assert.deepEqual(owners({ whenDeleted: 'Retain', whenScaled: 'Delete' }, 1), ['pod-uid'])
    assert.deepEqual(owners({ whenDeleted: 'Delete', whenScaled: 'Delete' }, 3), ['set-uid'])
    assert.deepEqual(owners({ whenDeleted: 'Delete', whenScaled: 'Delete' }, 1), ['pod-uid'])
    const foreign: KubeObject = { metadata: { name: 'x', ownerReferences: [{ apiVersion: 'v1', kind: 'Thing', name: 't', uid: 'other', controller: true }] } }
    assert.equal(claimOwners(foreign, set({ persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' } }), pod), undefined)
  })
})
