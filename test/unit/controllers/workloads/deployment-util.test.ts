import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { newReplicaSetReplicas } from '../../../../core/controllers/workloads/deployment-sync.js'
import { equalIgnoringHash, fenceposts, maxUnavailable, nextRevision, parseRevision, podTemplateHash, setNewReplicaSetAnnotations } from '../../../../core/controllers/workloads/deployment-util.js'
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
    assert.ok(setNewReplicaSetAnnotations(deployment(3), fresh, 1n, false))
    assert.deepEqual(fresh.metadata.annotations, {
      team: 'a',
      'deployment.kubernetes.io/revision': '1',
      'deployment.kubernetes.io/desired-replicas': '3',
      'deployment.kubernetes.io/max-replicas': '4',
    })
    assert.ok(setNewReplicaSetAnnotations(deployment(3), fresh, 4n, true))
    const annotations: Record<string, string> = fresh.metadata.annotations ?? {}
    assert.equal(annotations['deployment.kubernetes.io/revision'], '4')
    assert.equal(annotations['deployment.kubernetes.io/revision-history'], '1')
    assert.ok(!setNewReplicaSetAnnotations(deployment(3), fresh, 4n, true), 'nothing to change')
  })
})

describe('revisions', () => {
  const rs = (revision?: string): KubeObject => ({ metadata: { name: 'rs', ...(revision !== undefined ? { annotations: { 'deployment.kubernetes.io/revision': revision } } : {}) } })

  it('reads them as signed 64-bit integers, every digit kept', () => {
    assert.equal(parseRevision('3546343826724305832'), 3546343826724305832n)
    assert.equal(parseRevision('9223372036854775807'), 2n ** 63n - 1n)
    assert.equal(parseRevision('+7'), 7n)
    assert.equal(parseRevision('-2'), -2n)
    for (const bad of ['', '1.5', '0x10', ' 1', '9223372036854775808']) assert.equal(parseRevision(bad), undefined, bad)
  })

  it('gives the next revision after the largest that parses, past 2^53 too', () => {
    assert.equal(nextRevision([rs('3546343826724305832'), rs('2'), rs('not a number'), rs()]), 3546343826724305833n)
    assert.equal(nextRevision([]), 1n)
    assert.equal(nextRevision([rs('-5')]), 1n, 'never below 1, as upstream starts its maximum at 0')
  })

  it('writes a new ReplicaSet\'s revision with every digit', () => {
    const adopted: KubeObject = { metadata: { name: 'new', annotations: { 'deployment.kubernetes.io/revision': '3546343826724305832' } } }
    assert.ok(setNewReplicaSetAnnotations(deployment(1), adopted, nextRevision([adopted]), true))
    assert.equal(adopted.metadata.annotations?.['deployment.kubernetes.io/revision'], '3546343826724305833')
    assert.equal(adopted.metadata.annotations?.['deployment.kubernetes.io/revision-history'], '3546343826724305832')
  })

  it('leaves a ReplicaSet whose revision does not parse as it is, as upstream', () => {
    const odd: KubeObject = { metadata: { name: 'odd', annotations: { 'deployment.kubernetes.io/revision': 'x' } } }
    assert.equal(setNewReplicaSetAnnotations(deployment(1), odd, 2n, true), false, 'nothing to write')
    assert.equal(odd.metadata.annotations?.['deployment.kubernetes.io/revision'], 'x')
  })
})
