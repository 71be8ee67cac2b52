/** HorizontalPodAutoscalers: the autoscaling/v2 defaults and upstream's rules of the spec. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { applyHpaV2Defaults } from '../../../core/resources/autoscaling/hpa-defaults.js'
import { validateHorizontalPodAutoscaler } from '../../../core/resources/autoscaling/hpa-rules.js'
import type { KubeObject } from '../../../core/machinery/object.js'
import { errorText } from '../../../core/machinery/field.js'

const target = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }
const hpa = (spec: Record<string, unknown>): KubeObject => ({ metadata: { name: 'h', namespace: 'ns' }, spec: { scaleTargetRef: target, maxReplicas: 3, ...spec } })
const problems = (spec: Record<string, unknown>, old?: KubeObject) => validateHorizontalPodAutoscaler(hpa(spec), old).map(errorText)
const cpu = (t: Record<string, unknown>) => ({ type: 'Resource', resource: { name: 'cpu', target: t } })

describe('autoscaling/v2 defaults', () => {
  it('gives one replica at least and a CPU target of 80% when no metric is named', () => {
    const h = hpa({})
    applyHpaV2Defaults(h)
    assert.equal((h['spec'] as Record<string, unknown>)['minReplicas'], 1)
    assert.deepEqual((h['spec'] as Record<string, unknown>)['metrics'], [cpu({ type: 'Utilization', averageUtilization: 80 })])
    assert.equal((h['spec'] as Record<string, unknown>)['behavior'], undefined)
  })

  it('fills a given behavior rule by rule, keeping what was written', () => {
    const h = hpa({ minReplicas: 2, behavior: { scaleDown: { stabilizationWindowSeconds: 60 } } })
    applyHpaV2Defaults(h)
    const spec = h['spec'] as Record<string, unknown>
    assert.equal(spec['minReplicas'], 2)
    assert.deepEqual(spec['behavior'], {
      scaleUp: {
        stabilizationWindowSeconds: 0,
        selectPolicy: 'Max',
        policies: [
          { type: 'Pods', value: 4, periodSeconds: 15 },
          { type: 'Percent', value: 100, periodSeconds: 15 },
        ],
      },
      scaleDown: { selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }], stabilizationWindowSeconds: 60 },
    })
  })
})

describe('autoscaler rules', () => {
  it('accepts a plain autoscaler', () => {
    assert.deepEqual(problems({ minReplicas: 1, metrics: [cpu({ type: 'Utilization', averageUtilization: 50 })] }), [])
  })

  it('bounds the replicas and wants a scale target', () => {
    assert.deepEqual(problems({ minReplicas: 0, maxReplicas: 0, scaleTargetRef: { name: 'a/b' } }), [
      'spec.minReplicas: Invalid value: 0: must be greater than or equal to 1',
      'spec.maxReplicas: Invalid value: 0: must be greater than 0',
      'spec.scaleTargetRef.kind: Required value',
      "spec.scaleTargetRef.name: Invalid value: \"a/b\": may not contain '/'",
      'spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas',
    ])
    assert.deepEqual(problems({ minReplicas: 5, maxReplicas: 3 }), ['spec.maxReplicas: Invalid value: 3: must be greater than or equal to `minReplicas`'])
  })

  it('keeps an autoscaler that already scales to zero, if it scales on an object or external metric', () => {
    const old = hpa({ minReplicas: 0 })
    assert.deepEqual(problems({ minReplicas: 0, metrics: [cpu({ type: 'Utilization', averageUtilization: 50 })] }, old), [
      'spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas',
    ])
    const external = { type: 'External', external: { metric: { name: 'queue' }, target: { type: 'Value', value: '10' } } }
    assert.deepEqual(problems({ minReplicas: 0, metrics: [external] }, old), [])
  })

  it('checks each metric’s source and target', () => {
    assert.deepEqual(
      problems({
        metrics: [
          cpu({ type: 'Ratio', averageUtilization: 0, averageValue: '-1' }),
          { type: 'Pods', pods: { metric: { name: '' }, target: { type: 'AverageValue' } } },
          { type: 'Object', object: { describedObject: target, metric: { name: 'hits' }, target: { type: 'Value' } } },
        ],
      }),
      [
        'spec.metrics[0].resource.target.type: Invalid value: "Ratio": must be either Utilization, Value, or AverageValue',
        'spec.metrics[0].resource.target.averageValue: Invalid value: "-1": must be positive',
        'spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0',
        'spec.metrics[0].resource.target.averageValue: Forbidden: may not set both a target raw value and a target utilization',
        'spec.metrics[1].pods.metric.name: Required value: must specify a metric name',
        'spec.metrics[1].pods.target.averageValue: Required value: must specify a positive target averageValue',
        'spec.metrics[2].object.target.averageValue: Required value: must set either a target value or averageValue',
      ],
    )
  })

  it('wants exactly the source its type names', () => {
    assert.deepEqual(problems({ metrics: [{ type: 'Pods', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 5 } } }] }), [
      'spec.metrics[0].pods: Required value: must populate information for the given metric source',
    ])
    assert.deepEqual(
      problems({
        metrics: [
          {
            type: 'Resource',
            resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 5 } },
            pods: { metric: { name: 'x' }, target: { type: 'AverageValue', averageValue: '1' } },
          },
        ],
      }),
      ['spec.metrics[0].pods: Forbidden: must populate the given metric source only'],
    )
    assert.deepEqual(problems({ metrics: [{ type: 'Magic' }] }), [
      'spec.metrics[0].type: Unsupported value: "Magic": supported values: "ContainerResource", "External", "Object", "Pods", "Resource"',
      'spec.metrics[0].type: Unsupported value: "Magic": supported values: "ContainerResource", "External", "Object", "Pods", "Resource"',
    ])
  })

  it('checks a container resource’s name and container', () => {
    const metric = { type: 'ContainerResource', containerResource: { name: 'pods', container: 'Web', target: { type: 'Utilization', averageUtilization: 50 } } }
    const [name, container, ...rest] = problems({ metrics: [metric] })
    assert.equal(name, 'spec.metrics[0].containerResource.name: Invalid value: "pods": must be a standard resource for containers')
    assert.match(container ?? '', /^spec\.metrics\[0\]\.containerResource\.container: Invalid value: "Web": a lowercase RFC 1123 label/)
    assert.deepEqual(rest, [])
  })

  it('checks the scaling rules of a behavior', () => {
    const behavior = {
      scaleUp: { stabilizationWindowSeconds: 4000, selectPolicy: 'Most', policies: [{ type: 'Nodes', value: 0, periodSeconds: 2000 }] },
      scaleDown: { stabilizationWindowSeconds: -1, policies: [] },
    }
    assert.deepEqual(problems({ behavior }), [
      'spec.behavior.scaleUp.stabilizationWindowSeconds: Invalid value: 4000: must be less than or equal to 3600',
      'spec.behavior.scaleUp.selectPolicy: Unsupported value: "Most": supported values: "Disabled", "Max", "Min"',
      'spec.behavior.scaleUp.policies[0].type: Unsupported value: "Nodes": supported values: "Percent", "Pods"',
      'spec.behavior.scaleUp.policies[0].value: Invalid value: 0: must be greater than zero',
      'spec.behavior.scaleUp.policies[0].periodSeconds: Invalid value: 2000: must be less than or equal to 1800',
      'spec.behavior.scaleDown.stabilizationWindowSeconds: Invalid value: -1: must be greater than or equal to zero',
      'spec.behavior.scaleDown.policies: Required value: must specify at least one Policy',
    ])
  })
})
