/**
 * The resize strategy and validation apart from the server: what a write
 * through `pods/<name>/resize` keeps, and what upstream's ValidatePodResize
 * says of init containers and pod-level resources, which the integration
 * tests do not reach.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { errorText } from '../../../core/machinery/field.js'
import type { KubeObject } from '../../../core/machinery/object.js'
import { narrowToResize } from '../../../core/resources/core/pod-resize.js'
import { validatePodResize } from '../../../core/resources/core/pod-resize-validation.js'

type Spec = Record<string, any>

const cpu = (request: string, limit = '1') => ({ requests: { cpu: request, memory: '64Mi' }, limits: { cpu: limit, memory: '128Mi' } })

function pod(spec: Spec, status: Spec = { phase: 'Running', qosClass: 'Burstable' }): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default', resourceVersion: '5' }, spec, status }
}

/** The errors of resizing the pod with `spec` after `change`, through the strategy as the server runs it. */
function problems(spec: Spec, change: (s: Spec) => void): string[] {
  const old = pod(spec)
  const written = structuredClone(old)
  change(written['spec'] as Spec)
  return validatePodResize(narrowToResize(written, old), old, () => []).map(errorText)
}

describe('narrowToResize', () => {
  it('keeps the resources and resize policies written, and everything else as stored', () => {
    const old = pod({ containers: [{ name: 'app', image: 'nginx', resources: cpu('100m') }], initContainers: [{ name: 'init', image: 'busybox', resources: cpu('100m') }] })
    const written = structuredClone(old)
    const spec = written['spec'] as Spec
    spec.containers[0] = { name: 'app', image: 'evil', resources: cpu('200m'), resizePolicy: [{ resourceName: 'cpu', restartPolicy: 'NotRequired' }] }
    spec.initContainers[0].resources = cpu('300m')
    spec.nodeName = 'elsewhere'
    written.metadata.labels = { x: 'y' }
    written['status'] = { phase: 'Failed' }
    const out = narrowToResize(written, old)
    assert.deepEqual(out['spec'], {
      containers: [{ name: 'app', image: 'nginx', resources: cpu('200m'), resizePolicy: [{ resourceName: 'cpu', restartPolicy: 'NotRequired' }] }],
      initContainers: [{ name: 'init', image: 'busybox', resources: cpu('300m') }],
    })
    assert.deepEqual(out['status'], old['status'])
    assert.equal(out.metadata.labels, undefined)
    assert.equal(out.metadata.resourceVersion, '5')
  })

  it('lets renamed containers through as written, for validation to name them', () => {
    const old = pod({ containers: [{ name: 'a', image: 'nginx' }, { name: 'b', image: 'nginx' }] })
    const written = structuredClone(old)
    ;(written['spec'] as Spec).containers.reverse()
    assert.deepEqual(((narrowToResize(written, old)['spec'] as Spec).containers as Spec[]).map((c) => c['name']), ['b', 'a'])
  })
})

describe('validatePodResize', () => {
  it('accepts a lower memory limit and a resized sidecar or init container', () => {
    const spec = {
      containers: [{ name: 'app', image: 'nginx', resources: cpu('100m') }],
      initContainers: [
        { name: 'sidecar', image: 'envoy', restartPolicy: 'Always', resources: cpu('100m') },
        { name: 'init', image: 'busybox', resources: cpu('100m') },
      ],
    }
    assert.deepEqual(
      problems(spec, (s) => {
        s.containers[0].resources.limits.memory = '100Mi'
        s.initContainers[0].resources.requests.cpu = '200m'
        s.initContainers[1].resources.requests.cpu = '200m'
      }),
      [],
    )
  })

  it('refuses other resources of an init container, and a run-to-completion one restarted on resize', () => {
    const spec = {
      containers: [{ name: 'app', image: 'nginx', resources: cpu('100m') }],
      initContainers: [{ name: 'init', image: 'busybox', resources: cpu('100m'), resizePolicy: [{ resourceName: 'cpu', restartPolicy: 'RestartContainer' }] }],
    }
    assert.deepEqual(
      problems(spec, (s) => (s.initContainers[0].resources.requests['ephemeral-storage'] = '1Gi')),
      [
        'spec.initContainers[0]: Forbidden: only cpu and memory resources for init or sidecar containers are mutable',
        'spec.initContainers[0]: Forbidden: non-sidecar init containers with a resize policy of RestartContainer cannot be resized',
      ],
    )
    assert.deepEqual(problems(spec, (s) => (s.initContainers[0].resources.requests.cpu = '200m')), [
      'spec.initContainers[0]: Forbidden: non-sidecar init containers with a resize policy of RestartContainer cannot be resized',
    ])
  })

  it('names an init container removed and a request removed from one', () => {
    const spec = { containers: [{ name: 'app', image: 'nginx', resources: cpu('100m') }], initContainers: [{ name: 'init', image: 'busybox', resources: cpu('100m') }] }
    assert.deepEqual(problems(spec, (s) => (s.initContainers = [])), ['spec.initContainers: Forbidden: initContainers may not be added or removed on resize'])
    assert.deepEqual(problems(spec, (s) => delete s.initContainers[0].resources.requests.memory), [
      'spec.initContainers[0].resources.requests: Forbidden: resource requests cannot be removed',
    ])
  })

  it('resizes pod-level cpu and memory, and refuses their removal or other resources', () => {
    const spec = { resources: cpu('500m', '2'), containers: [{ name: 'app', image: 'nginx' }] }
    assert.deepEqual(problems(spec, (s) => (s.resources.requests.cpu = '1')), [])
    assert.deepEqual(problems(spec, (s) => delete s.resources), [
      'spec: Invalid value: "Burstable": Pod QOS Class may not change as a result of resizing',
      'spec.resources: Forbidden: pod-level resources cannot be removed',
    ])
    assert.deepEqual(problems(spec, (s) => delete s.resources.limits.memory), ['spec.resources.limits: Forbidden: pod-level resource limits cannot be removed'])
    assert.deepEqual(problems(spec, (s) => (s.resources.requests['ephemeral-storage'] = '1Gi')), [
      'spec: Forbidden: only cpu and memory resources are mutable at pod-level',
    ])
  })

  it('refuses a pod with node-allocatable resource claims', () => {
    const old = pod({ containers: [{ name: 'app', image: 'nginx', resources: cpu('100m') }] }, { qosClass: 'Burstable', nodeAllocatableResourceClaimStatuses: [{ resourceClaimName: 'gpu' }] })
    const written = structuredClone(old)
    ;(written['spec'] as Spec).containers[0].resources.requests.cpu = '200m'
    assert.deepEqual(validatePodResize(narrowToResize(written, old), old, () => []).map(errorText), [
      'spec: Forbidden: pods with node allocatable resource claims cannot be resized',
    ])
  })
})
