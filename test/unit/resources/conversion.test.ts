/**
 * Versions that share their objects: an autoscaling/v2 HPA survives a trip
 * through v1 and back, whatever its metrics; events.k8s.io events are core
 * events under other names.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { eventFromCore, eventToCore } from '../../../core/resources/conversion/events-v1.js'
import { hpaV1ToV2, hpaV2ToV1 } from '../../../core/resources/conversion/hpa-v1.js'
import type { KubeObject } from '../../../core/machinery/object.js'

const v2: KubeObject = {
  apiVersion: 'autoscaling/v2',
  kind: 'HorizontalPodAutoscaler',
  metadata: { name: 'web', namespace: 'default', annotations: { team: 'a' } },
  spec: {
    scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
    minReplicas: 2,
    maxReplicas: 10,
    metrics: [
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } },
      { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '500Mi' } } },
      { type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '100' } } },
      {
        type: 'Object',
        object: {
          describedObject: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', name: 'web' },
          metric: { name: 'rps', selector: { matchLabels: { path: '/' } } },
          target: { type: 'Value', value: '2k' },
        },
      },
      { type: 'External', external: { metric: { name: 'queue' }, target: { type: 'AverageValue', averageValue: '30' } } },
      { type: 'ContainerResource', containerResource: { name: 'cpu', container: 'app', target: { type: 'Utilization', averageUtilization: 50 } } },
    ],
    behavior: { scaleDown: { stabilizationWindowSeconds: 300 } },
  },
  status: {
    currentReplicas: 3,
    desiredReplicas: 3,
    currentMetrics: [
      { type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 45, averageValue: '450m' } } },
      { type: 'Pods', pods: { metric: { name: 'qps' }, current: { averageValue: '80' } } },
    ],
    conditions: [{ type: 'AbleToScale', status: 'True', reason: 'ReadyForNewScale', lastTransitionTime: '2024-05-01T00:00:00Z' }],
  },
}

describe('autoscaling/v1 and v2', () => {
  it('keeps the CPU target and current utilization in v1’s own fields', () => {
    const v1 = hpaV2ToV1(v2)
    assert.equal(v1.apiVersion, 'autoscaling/v1')
    assert.equal((v1['spec'] as Record<string, unknown>)['targetCPUUtilizationPercentage'], 60)
    assert.equal((v1['status'] as Record<string, unknown>)['currentCPUUtilizationPercentage'], 45)
    const annotations = v1.metadata.annotations!
    assert.equal(annotations['team'], 'a')
    assert.deepEqual(JSON.parse(annotations['autoscaling.alpha.kubernetes.io/metrics']!)[0], {
      type: 'Resource',
      resource: { name: 'memory', targetAverageValue: '500Mi' },
    })
  })

  it('writes v1\u2019s two replica counts for a new autoscaler, as Go writes its plain fields', () => {
    const fresh: KubeObject = { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'x' }, spec: { maxReplicas: 3 } }
    assert.deepEqual(hpaV2ToV1(fresh)['status'], { currentReplicas: 0, desiredReplicas: 0 })
  })

  it('brings every v2 field back from v1, annotations removed', () => {
    assert.deepEqual(hpaV1ToV2(hpaV2ToV1(v2)), v2)
  })

  it('gives a v1 object without a target the default 80% CPU utilization', () => {
    const v1: KubeObject = { apiVersion: 'autoscaling/v1', metadata: { name: 'x' }, spec: { maxReplicas: 3 } }
    assert.deepEqual((hpaV1ToV2(v1)['spec'] as Record<string, unknown>)['metrics'], [
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } },
    ])
  })
})

describe('events.k8s.io/v1 and core events', () => {
  it('rename the fields both ways and lose nothing', () => {
    const ev: KubeObject = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: 'e' },
      regarding: { kind: 'Pod', name: 'p' },
      note: 'hi',
      reportingController: 'c',
      reportingInstance: 'i',
      deprecatedCount: 3,
      deprecatedSource: { component: 'kubelet' },
      deprecatedFirstTimestamp: '2024-05-01T00:00:00Z',
      deprecatedLastTimestamp: '2024-05-01T00:01:00Z',
      series: { count: 2, lastObservedTime: '2024-05-01T00:01:00.000000Z' },
    }
    const core = eventToCore(ev)
    assert.deepEqual(core, {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'e' },
      involvedObject: { kind: 'Pod', name: 'p' },
      message: 'hi',
      reportingComponent: 'c',
      reportingInstance: 'i',
      count: 3,
      source: { component: 'kubelet' },
      firstTimestamp: '2024-05-01T00:00:00Z',
      lastTimestamp: '2024-05-01T00:01:00Z',
      series: { count: 2, lastObservedTime: '2024-05-01T00:01:00.000000Z' },
    })
    assert.deepEqual(eventFromCore(core), ev)
  })
})
