import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Metrics } from '../../../core/metrics/metrics.js'

describe('metrics exposition', () => {
  it('writes gauges in the Prometheus text format, names and labels sorted and escaped', () => {
    const m = new Metrics()
    m.setGauge('b_total', 'Bees.', { resource: 'pods' }, 3)
    m.setGauge('a_objects', 'Objects.', { resource: 'deployments.apps', z: 'q"uote' }, 7)
    m.setGauge('b_total', 'Bees.', { resource: 'pods' }, 4)
    assert.equal(
      m.render(),
      [
        '# HELP a_objects Objects.',
        '# TYPE a_objects gauge',
        'a_objects{resource="deployments.apps",z="q\\"uote"} 7',
        '# HELP b_total Bees.',
        '# TYPE b_total gauge',
        'b_total{resource="pods"} 4',
        '',
      ].join('\n'),
    )
  })
})
