import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { newReplicaSetReplicas } from '../../../../core/controllers/workloads/deployment-sync.js'
import { equalIgnoringHash, fenceposts, maxUnavailable, podTemplateHash, setNewReplicaSetAnnotations } from '../../../../core/controllers/workloads/deployment-util.js'
import type { KubeObject } from '../../../../core/machinery/object.js'

const deployment = (replicas: number, rollingUpdate?: Record<string, unknown>, type = 'RollingUpdate'): KubeObject => ({
  metadata: { name: 'web', annotations: { team: 'a', 'kubectl.kubernetes.io/last-applied-configuration': '{}' } },
  spec: { replicas, strategy: { type, ...(rollingUpdate ? { rollingUpdate } : {}) } },
})
const rs = (replicas: number): KubeObject => ({ metadata: { name: `rs-${replicas}` }, spec: { replicas } })

describe('rollout bounds', () => {
  it('rounds maxSurge up and maxUnavailable down, and never lets both be zero', () => {
    assert.deepEqual(fenceposts(deployment(10)), { surge: 3, unavailable: 2 })
    assert.deepEqual(fenceposts(deployment(3, { maxSurge: '34%', maxUnavailable: '34%' })), { surge: 2, unavailable: 1 })
    assert.deepEqual(fenceposts(deployment(1, { maxSurge: 0, maxUnavailable: '25%' })), { surge: 0, unavailable: 1 })
    assert.equal(maxUnavailable(deployment(2, { maxSurge: 0, maxUnavailable: 5 })), 2)
    assert.equal(maxUnavailable(deployment(2, undefined, 'Recreate')), 0)
  })

  it('grows the new ReplicaSet up to replicas + maxSurge in all', () => {
    const d = deployment(4)
    assert.equal(newReplicaSetReplicas(d, [rs(4), rs(0)], rs(0)), 1)
    assert.equal(newReplicaSetReplicas(d, [rs(3), rs(1)], rs(1)), 2)
    assert.equal(newReplicaSetReplicas(d, [rs(5)], rs(0)), 0)
    assert.equal(newReplicaSetReplicas(deployment(4, undefined, 'Recreate'), [rs(4)], rs(0)), 4)
  })
})

describe('pod-template-hash', () => {
  const template = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } }

  it('is stable for a template, changes with it and with the collision count, in upstream alphabet', () => {
    const hash = podTemplateHash(template)
    assert.match(hash, /^[bcdfghjklmnpqrstvwxz2456789]{1,10}$/)
    assert.equal(podTemplateHash(structuredClone(template)), hash)
    assert.notEqual(podTemplateHash({ ...template, spec: { containers: [{ name: 'c', image: 'nginx:2' }] } }), hash)
    assert.notEqual(podTemplateHash(template, 1), hash)
  })

  it('compares templates ignoring the hash label and zero plain fields, as Go does', () => {
    const hashed = structuredClone(template) as any
    hashed.metadata.labels['pod-template-hash'] = 'abc'
    hashed.spec.containers[0].stdin = false
    hashed.spec.hostNetwork = false
    assert.ok(equalIgnoringHash(template, hashed))
    hashed.spec.automountServiceAccountToken = false
    assert.ok(!equalIgnoringHash(template, hashed), 'a pointer field set to false is a difference')
  })
})

describe('ReplicaSet annotations', () => {
  it('copies the Deployment annotations but kubectl and rollout ones, and keeps history on a rollback', () => {
    const fresh: KubeObject = { metadata: { name: 'new' } }
    assert.ok(setNewReplicaSetAnnotations(deployment(3), fresh, 1, false))
    assert.deepEqual(fresh.metadata.annotations, {
      team: 'a',
      'deployment.kubernetes.io/revision': '1',
      'deployment.kubernetes.io/desired-replicas': '3',
      'deployment.kubernetes.io/max-replicas': '4',
    })
    assert.ok(setNewReplicaSetAnnotations(deployment(3), fresh, 4, true))
    const annotations: Record<string, string> = fresh.metadata.annotations ?? {}
    assert.equal(annotations['deployment.kubernetes.io/revision'], '4')
    assert.equal(annotations['deployment.kubernetes.io/revision-history'], '1')
    assert.ok(!setNewReplicaSetAnnotations(deployment(3), fresh, 4, true), 'nothing to change')
  })
})
