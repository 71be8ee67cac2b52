/** The plugins that only set pod (and node) fields, and the ones that only refuse a field. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { alwaysPullImages } from '../../../core/admission/builtin/always-pull-images.js'
import { defaultTolerationSeconds } from '../../../core/admission/builtin/default-toleration-seconds.js'
import { denyServiceExternalIPs } from '../../../core/admission/builtin/deny-service-external-ips.js'
import { extendedResourceToleration } from '../../../core/admission/builtin/extended-resource-toleration.js'
import { limitPodHardAntiAffinityTopology } from '../../../core/admission/builtin/limit-pod-hard-anti-affinity-topology.js'
import { taintNodesByCondition } from '../../../core/admission/builtin/taint-nodes-by-condition.js'
import { nodes } from '../../../core/resources/core/nodes.js'
import { pods } from '../../../core/resources/core/pods.js'
import { services } from '../../../core/resources/core/services.js'
import { attrs, pod, refusal } from './attributes.js'

const notReady = (s: number) => ({ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: s })
const unreachable = (s: number) => ({ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: s })

describe('DefaultTolerationSeconds admission', () => {
  const table: [string, { notReady?: number; unreachable?: number }, unknown[] | undefined, unknown[]][] = [
    ['both, 300s by default', {}, undefined, [notReady(300), unreachable(300)]],
    ['the flags’ seconds', { notReady: 60, unreachable: 30 }, undefined, [notReady(60), unreachable(30)]],
    ['only the one not tolerated yet', {}, [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists' }], [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists' }, notReady(300)]],
    ['none next to a toleration of everything', {}, [{ operator: 'Exists' }], [{ operator: 'Exists' }]],
  ]
  for (const [what, seconds, tolerations, want] of table) {
    it(`adds ${what}`, () => {
      const a = attrs(pods, 'CREATE', pod(tolerations ? { tolerations } : {}))
      void defaultTolerationSeconds(seconds).admit(a)
      assert.deepEqual((a.object?.['spec'] as Record<string, unknown>)['tolerations'], want)
    })
  }
})

describe('AlwaysPullImages admission', () => {
  it('sets Always on every container, and refuses a pod a later plugin set otherwise', async () => {
    const a = attrs(pods, 'CREATE', pod({ initContainers: [{ name: 'i', image: 'x' }], containers: [{ name: 'c', image: 'y', imagePullPolicy: 'IfNotPresent' }] }))
    alwaysPullImages.admit(a)
    const spec = a.object?.['spec'] as Record<string, any>
    assert.deepEqual([spec['initContainers'][0].imagePullPolicy, spec['containers'][0].imagePullPolicy], ['Always', 'Always'])
    spec['containers'][0].imagePullPolicy = 'Never'
    assert.deepEqual(await refusal(() => alwaysPullImages.validate(a)), {
      code: 500,
      message: 'pods "p" is forbidden: spec.containers[0].imagePullPolicy: Unsupported value: "Never": supported values: "Always"',
    })
  })

  it('leaves an update that brings no new image alone', async () => {
    const old = pod({ containers: [{ name: 'c', image: 'y', imagePullPolicy: 'IfNotPresent' }] })
    const a = attrs(pods, 'UPDATE', old, { oldObject: old as never })
    alwaysPullImages.admit(a)
    assert.equal(await refusal(() => alwaysPullImages.validate(a)), undefined)
    assert.equal((a.object?.['spec'] as Record<string, any>)['containers'][0].imagePullPolicy, 'IfNotPresent')
  })
})

describe('ExtendedResourceToleration admission', () => {
  it('tolerates the NoSchedule taint of each extended resource requested, sorted, once', () => {
    const requests = (r: Record<string, string>) => ({ resources: { requests: r } })
    const a = attrs(
      pods,
      'CREATE',
      pod({
        containers: [{ name: 'c', ...requests({ cpu: '1', 'example.com/gpu': '1', 'kubernetes.io/native': '1' }) }],
        initContainers: [{ name: 'i', ...requests({ 'acme.io/fpga': '1' }) }],
        tolerations: [{ key: 'example.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
      }),
    )
    extendedResourceToleration.admit(a)
    assert.deepEqual((a.object?.['spec'] as Record<string, unknown>)['tolerations'], [
      { key: 'example.com/gpu', operator: 'Exists', effect: 'NoSchedule' },
      { key: 'acme.io/fpga', operator: 'Exists', effect: 'NoSchedule' },
    ])
  })
})

describe('LimitPodHardAntiAffinityTopology admission', () => {
  const anti = (topologyKey: string) => pod({ affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey }] } } })
  it('allows only the hostname key in required anti-affinity', async () => {
    assert.equal(await refusal(() => limitPodHardAntiAffinityTopology.validate(attrs(pods, 'CREATE', anti('kubernetes.io/hostname')))), undefined)
    assert.deepEqual(await refusal(() => limitPodHardAntiAffinityTopology.validate(attrs(pods, 'CREATE', anti('topology.kubernetes.io/zone')))), {
      code: 403,
      message: 'pods "p" is forbidden: affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey topology.kubernetes.io/zone but only key kubernetes.io/hostname is allowed',
    })
  })
})

describe('DenyServiceExternalIPs admission', () => {
  const svc = (ips?: string[]) => ({ metadata: { name: 's', namespace: 'default' }, spec: ips ? { externalIPs: ips } : {} })
  const table: [string, 'CREATE' | 'UPDATE', string[] | undefined, string[] | undefined, boolean][] = [
    ['a create without external IPs', 'CREATE', undefined, undefined, true],
    ['a create with one', 'CREATE', ['1.2.3.4'], undefined, false],
    ['an update keeping or dropping them', 'UPDATE', ['1.2.3.4'], ['1.2.3.4', '5.6.7.8'], true],
    ['an update adding one', 'UPDATE', ['1.2.3.4', '9.9.9.9'], ['1.2.3.4'], false],
  ]
  for (const [what, op, ips, old, passes] of table) {
    it(`${passes ? 'admits' : 'refuses'} ${what}`, async () => {
      const a = attrs(services, op, svc(ips), op === 'UPDATE' ? { oldObject: svc(old) as never } : {})
      const got = await refusal(() => denyServiceExternalIPs.validate(a))
      assert.deepEqual(got, passes ? undefined : { code: 403, message: 'services "s" is forbidden: use of external IPs is denied by admission control' })
    })
  }
})

describe('TaintNodesByCondition admission', () => {
  it('gives a new node the not-ready NoSchedule taint once', () => {
    const a = attrs(nodes, 'CREATE', { metadata: { name: 'n' }, spec: { taints: [{ key: 'x', effect: 'NoExecute' }] } })
    taintNodesByCondition.admit(a)
    taintNodesByCondition.admit(a)
    assert.deepEqual((a.object?.['spec'] as Record<string, unknown>)['taints'], [
      { key: 'x', effect: 'NoExecute' },
      { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' },
    ])
  })
})
