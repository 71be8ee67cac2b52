import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { applyPodDefaultsInSteps, applyPodSpecDefaultsInSteps, defaultPullPolicy } from '../../../core/resources/core/pod-spec-defaults.js'
import { runAtOnce } from '../../../core/machinery/time-slice.js'

const applyPodSpecDefaults = (spec: Record<string, unknown>) => runAtOnce(applyPodSpecDefaultsInSteps(spec))
import { podQOSClass } from '../../../core/resources/core/pod-spec-resources.js'

describe('pod spec defaults', () => {
  it('fills the pod-level fields upstream defaults', () => {
    const spec: Record<string, unknown> = { containers: [] }
    applyPodSpecDefaults(spec)
    assert.deepEqual(spec, {
      containers: [],
      dnsPolicy: 'ClusterFirst',
      restartPolicy: 'Always',
      securityContext: {},
      terminationGracePeriodSeconds: 30,
      schedulerName: 'default-scheduler',
    })
  })

  it('keeps what the user chose', () => {
    const spec: Record<string, unknown> = { restartPolicy: 'Never', terminationGracePeriodSeconds: 0, dnsPolicy: 'Default' }
    applyPodSpecDefaults(spec)
    assert.equal(spec['restartPolicy'], 'Never')
    assert.equal(spec['terminationGracePeriodSeconds'], 0)
    assert.equal(spec['dnsPolicy'], 'Default')
  })

  for (const [image, policy] of [
    ['nginx', 'Always'],
    ['nginx:latest', 'Always'],
    ['nginx:1.27', 'IfNotPresent'],
    ['registry.example.com:5000/team/app', 'Always'],
    ['registry.example.com:5000/team/app:v2', 'IfNotPresent'],
    ['nginx@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', 'IfNotPresent'],
  ] as const)
    it(`pulls ${image} with ${policy}`, () => assert.equal(defaultPullPolicy(image), policy))

  it("fills every container's defaults, probes, ports and env references included", () => {
    const container = {
      name: 'app',
      image: 'nginx',
      ports: [{ containerPort: 80 }],
      env: [{ name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }],
      livenessProbe: { httpGet: { port: 80 } },
    }
    const spec: Record<string, unknown> = { containers: [container], initContainers: [{ name: 'init', image: 'busybox:1' }] }
    applyPodSpecDefaults(spec)
    assert.deepEqual(container, {
      name: 'app',
      image: 'nginx',
      imagePullPolicy: 'Always',
      terminationMessagePath: '/dev/termination-log',
      terminationMessagePolicy: 'File',
      resources: {},
      ports: [{ containerPort: 80, protocol: 'TCP' }],
      env: [{ name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName', apiVersion: 'v1' } } }],
      livenessProbe: {
        httpGet: { port: 80, path: '/', scheme: 'HTTP' },
        timeoutSeconds: 1,
        periodSeconds: 10,
        successThreshold: 1,
        failureThreshold: 3,
      },
    })
    assert.equal((spec['initContainers'] as Record<string, unknown>[])[0]!['imagePullPolicy'], 'IfNotPresent')
  })

  it('gives volumes a source and file modes', () => {
    const spec: Record<string, unknown> = {
      containers: [],
      volumes: [{ name: 'scratch' }, { name: 'creds', secret: { secretName: 's' } }, { name: 'conf', configMap: { name: 'c', defaultMode: 256 } }],
    }
    applyPodSpecDefaults(spec)
    assert.deepEqual(spec['volumes'], [
      { name: 'scratch', emptyDir: {} },
      { name: 'creds', secret: { secretName: 's', defaultMode: 420 } },
      { name: 'conf', configMap: { name: 'c', defaultMode: 256 } },
    ])
  })

  it("uses a container's ports as host ports on the host network", () => {
    const spec: Record<string, unknown> = { hostNetwork: true, containers: [{ name: 'a', image: 'x:1', ports: [{ containerPort: 8080 }] }] }
    applyPodSpecDefaults(spec)
    assert.deepEqual((spec['containers'] as Record<string, unknown>[])[0]!['ports'], [{ containerPort: 8080, protocol: 'TCP', hostPort: 8080 }])
  })
})

describe('pod defaults', () => {
  it('turns service links on and requests what a container limits', () => {
    const pod: Record<string, unknown> = {
      spec: { containers: [{ name: 'a', image: 'x:1', resources: { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '500m' } } }] },
    }
    runAtOnce(applyPodDefaultsInSteps(pod))
    const spec = pod['spec'] as Record<string, any>
    assert.equal(spec['enableServiceLinks'], true)
    assert.deepEqual(spec['containers'][0].resources.requests, { cpu: '500m', memory: '1Gi' })
  })
})

describe('QoS class', () => {
  const withResources = (...resources: Record<string, unknown>[]) => ({
    containers: resources.map((r, i) => ({ name: `c${i}`, image: 'x:1', resources: r })),
  })
  const cases: [string, Record<string, unknown>, string][] = [
    ['no requests or limits', withResources({}), 'BestEffort'],
    ['requests only', withResources({ requests: { cpu: '100m' } }), 'Burstable'],
    ['limits equal to requests for cpu and memory', withResources({ requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1000m', memory: '1Gi' } }), 'Guaranteed'],
    ['a request below its limit', withResources({ requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } }), 'Burstable'],
    ['one container without limits', withResources({ requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } }, {}), 'Burstable'],
    ['only a cpu limit', withResources({ requests: { cpu: '1' }, limits: { cpu: '1' } }), 'Burstable'],
  ]
  for (const [what, spec, qos] of cases) it(`is ${qos} with ${what}`, () => assert.equal(podQOSClass(spec), qos))
})
