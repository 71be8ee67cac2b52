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

describe('metric samples found again', () => {
  it('counts labels given in any order in one sample, and never merges two label sets', () => {
    const m = new Metrics()
    m.addCounter('c_total', 'C.', { a: 'x', b: 'y' })
    m.addCounter('c_total', 'C.', { b: 'y', a: 'x' })
    // Would share a key if names and values were only joined with separators.
    m.addCounter('c_total', 'C.', { a: 'x1:by' })
    m.addCounter('c_total', 'C.', { a: 'x', b: 'y' })
    assert.equal(m.value('c_total', { a: 'x', b: 'y' }), 3)
    assert.equal(m.value('c_total', { a: 'x1:by' }), 1)
  })

  it('observes through a histogram handle into the sample record() fills', () => {
    const m = new Metrics()
    const handle = m.histogram('h_seconds', 'H.', [0.1, 1], { op: 'create' })
    handle.observe(0.05)
    m.observe('h_seconds', 'H.', [0.1, 1], { op: 'create' }, 0.5)
    assert.match(m.render(), /h_seconds_bucket\{op="create",le="0.1"\} 1\nh_seconds_bucket\{op="create",le="1"\} 2\n/)
    assert.match(m.render(), /h_seconds_count\{op="create"\} 2\n/)
  })

  it('drops a disabled histogram observed through a handle', () => {
    const m = new Metrics({ disabled: ['h_seconds'] })
    m.histogram('h_seconds', 'H.', [1], {}).observe(0.5)
    assert.equal(m.render(), '')
  })
})

describe('metrics options', () => {
  it('hides a metric deprecated a release before the server, and shows it again for --show-hidden-metrics-for-version', () => {
    const deprecated = { old_total: '1.31', older_total: '1.30', current_total: '1.32' }
    const hidden = new Metrics({ deprecated })
    const shown = new Metrics({ deprecated, showHiddenForVersion: '1.31' })
    for (const m of [hidden, shown]) for (const name of Object.keys(deprecated)) m.addCounter(name, '[ALPHA] Things.', {})
    assert.doesNotMatch(hidden.render(), /^old_total/m)
    assert.doesNotMatch(hidden.render(), /^older_total/m)
    assert.match(hidden.render(), /# HELP current_total \[ALPHA\] \(Deprecated since 1\.32\.0\) Things\.\n# TYPE current_total counter\ncurrent_total 1/)
    assert.match(shown.render(), /^old_total 1$/m)
    assert.doesNotMatch(shown.render(), /^older_total/m)
  })

  it('writes histograms cumulatively with Go-formatted bounds', () => {
    const m = new Metrics()
    m.observe('size', 'Sizes.', [1000, 1e6], {}, 10)
    m.observe('size', 'Sizes.', [1000, 1e6], {}, 5000)
    m.observe('size', 'Sizes.', [1000, 1e6], {}, 5e7)
    assert.equal(
      m.render(),
      ['# HELP size Sizes.', '# TYPE size histogram', 'size_bucket{le="1000"} 1', 'size_bucket{le="1e+06"} 2', 'size_bucket{le="+Inf"} 3', 'size_sum 5.000501e+07', 'size_count 3', ''].join('\n'),
    )
  })

  it('resets every labelled series as upstream resets its vectors, and a held handle counts again from zero', () => {
    const m = new Metrics()
    const held = m.counter('calls_total', 'Calls.', { verb: 'GET' })
    held.add(5)
    m.addCounter('calls_total', 'Calls.', { verb: 'PUT' }, 2)
    m.setGauge('up', 'Up.', {}, 1)
    const sizes = m.histogram('size', 'Sizes.', [10], { kind: 'a' })
    sizes.observe(3)
    m.reset()
    assert.equal(m.render(), ['# HELP up Up.', '# TYPE up gauge', 'up 1', ''].join('\n'))
    assert.equal(m.value('calls_total', { verb: 'GET' }), undefined)
    held.add()
    sizes.observe(20)
    assert.equal(
      m.render(),
      [
        '# HELP calls_total Calls.',
        '# TYPE calls_total counter',
        'calls_total{verb="GET"} 1',
        '# HELP size Sizes.',
        '# TYPE size histogram',
        'size_bucket{kind="a",le="10"} 0',
        'size_bucket{kind="a",le="+Inf"} 1',
        'size_sum{kind="a"} 20',
        'size_count{kind="a"} 1',
        '# HELP up Up.',
        '# TYPE up gauge',
        'up 1',
        '',
      ].join('\n'),
    )
  })
})
