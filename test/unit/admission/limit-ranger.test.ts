/** LimitRanger's defaults and limits, without a server: a table of pods and claims against limit ranges and upstream's messages. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { applyContainerDefaults, claimViolations, podViolations } from '../../../core/admission/builtin/limit-range-checks.js'
import type { KubeObject } from '../../../core/machinery/object.js'

const range = (...limits: Record<string, unknown>[]): KubeObject => ({ metadata: { name: 'r' }, spec: { limits } })
const pod = (...containers: Record<string, unknown>[]): KubeObject => ({ metadata: { name: 'p' }, spec: { containers } })
const c = (requests?: Record<string, string>, limits?: Record<string, string>, name = 'c') => ({
  name,
  resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) },
})

describe('LimitRanger defaults', () => {
  it('fills only what a container leaves out, and notes it', () => {
    const p = pod(c({ cpu: '1' }), { name: 'd' })
    applyContainerDefaults(p, range({ type: 'Container', default: { cpu: '2', memory: '1Gi' }, defaultRequest: { cpu: '500m' } }))
    const [first, second] = (p['spec'] as { containers: { resources: unknown }[] }).containers
    assert.deepEqual(first?.resources, { requests: { cpu: '1' }, limits: { cpu: '2', memory: '1Gi' } })
    assert.deepEqual(second?.resources, { limits: { cpu: '2', memory: '1Gi' }, requests: { cpu: '500m' } })
    assert.equal(
      p.metadata.annotations?.['kubernetes.io/limit-ranger'],
      'LimitRanger plugin set: cpu, memory limit for container c; cpu request for container d; cpu, memory limit for container d',
    )
  })
})

describe('LimitRanger limits', () => {
  const cases: [string, KubeObject, KubeObject, string[]][] = [
    ['a container within its limits', range({ type: 'Container', min: { cpu: '100m' }, max: { cpu: '1' } }), pod(c({ cpu: '500m' }, { cpu: '1' })), []],
    [
      'a container without the request a min needs',
      range({ type: 'Container', min: { memory: '64Mi' } }),
      pod(c(undefined, undefined)),
      ['minimum memory usage per Container is 64Mi.  No request is specified'],
    ],
    [
      'a container without the limit a max needs',
      range({ type: 'Container', max: { cpu: '1' } }),
      pod(c({ cpu: '500m' })),
      ['maximum cpu usage per Container is 1.  No limit is specified'],
    ],
    [
      'a container under min by its limit',
      range({ type: 'Container', min: { cpu: '200m' } }),
      pod(c({ cpu: '200m' }, { cpu: '100m' })),
      ['minimum cpu usage per Container is 200m, but limit is 100m'],
    ],
    [
      'a ratio without a request',
      range({ type: 'Container', maxLimitRequestRatio: { memory: '2' } }),
      pod(c(undefined, { memory: '1Gi' })),
      ['memory max limit to request ratio per Container is 2, but no request is specified or request is 0'],
    ],
    [
      'a ratio over the maximum',
      range({ type: 'Container', maxLimitRequestRatio: { cpu: '1500m' } }),
      pod(c({ cpu: '100m' }, { cpu: '200m' })),
      ['cpu max limit to request ratio per Container is 1500m, but provided ratio is 2.000000'],
    ],
    [
      'a pod past its Pod max with every container within the Container one',
      range({ type: 'Container', max: { cpu: '1' } }, { type: 'Pod', max: { cpu: '1500m' } }),
      pod(c({ cpu: '1' }, { cpu: '1' }, 'a'), c({ cpu: '1' }, { cpu: '1' }, 'b')),
      ['maximum cpu usage per Pod is 1500m, but limit is 2'],
    ],
  ]
  for (const [what, limitRange, p, expected] of cases) it(`judges ${what}`, () => assert.deepEqual(podViolations(limitRange, p), expected))

  it('holds a claim to min and max of what it requests', () => {
    const claim = (storage: string): KubeObject => ({ metadata: {}, spec: { resources: { requests: { storage } } } })
    const r = range({ type: 'PersistentVolumeClaim', min: { storage: '1Gi' }, max: { storage: '10Gi' } })
    assert.deepEqual(claimViolations(r, claim('5Gi')), [])
    assert.deepEqual(claimViolations(r, claim('500Mi')), ['minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi'])
    assert.deepEqual(claimViolations(r, claim('20Gi')), ['maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi'])
  })
})
