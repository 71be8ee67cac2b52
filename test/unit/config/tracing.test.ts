import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ConfigFileError, problemText } from '../../../core/config/decode.js'
import { loadTracingConfiguration } from '../../../core/config/tracing.js'

const v1 = (body: string): string => `apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\n${body}`

function problems(text: string): string[] {
  try {
    loadTracingConfiguration(text, 'tracing.yaml')
  } catch (err) {
    assert.ok(err instanceof ConfigFileError, String(err))
    return err.problems.map(problemText)
  }
  return []
}

const GRPC_NAMES = 'Options are none, dns, unix, or unix-abstract.  See https://github.com/grpc/grpc/blob/master/doc/naming.md'

const cases = [
  {
    rule: 'the sampling rate is not negative',
    bad: v1('samplingRatePerMillion: -1\n'),
    problem: 'samplingRatePerMillion: Invalid value: -1: sampling rate must be positive',
    good: v1('samplingRatePerMillion: 0\n'),
  },
  {
    rule: 'the sampling rate is at most one million',
    bad: v1('samplingRatePerMillion: 1000001\n'),
    problem: 'samplingRatePerMillion: Invalid value: 1000001: sampling rate per million must be less than or equal to one million',
    good: v1('samplingRatePerMillion: 1000000\n'),
  },
  {
    rule: 'the endpoint is a gRPC name, not an http URL',
    bad: v1('endpoint: http://collector:4317\n'),
    problem: `endpoint: Invalid value: "http://collector:4317": unsupported scheme: http.  ${GRPC_NAMES}`,
    good: v1('endpoint: collector.monitoring:4317\n'),
  },
  {
    rule: 'the endpoint parses as a URL',
    bad: v1('endpoint: "dn%2s://localhost:4317"\n'),
    problem: 'endpoint: Invalid value: "dn%2s://localhost:4317": parse "dn%2s://localhost:4317": first path segment in URL cannot contain colon',
    good: v1('endpoint: dns://resolver/collector:4317\n'),
  },
  {
    rule: 'a host:port endpoint has a numeric port',
    bad: v1('endpoint: collector:otlp\n'),
    problem: 'endpoint: Invalid value: "dns://collector:otlp": parse "dns://collector:otlp": invalid port ":otlp" after host',
    good: v1('endpoint: unix:///var/run/otel.sock\n'),
  },
  {
    rule: 'the sampling rate is a 32-bit integer',
    bad: v1('samplingRatePerMillion: 0.5\n'),
    problem: 'samplingRatePerMillion: Invalid value: 0.5: must be an integer',
    good: v1('samplingRatePerMillion: 500\n'),
  },
  {
    rule: 'fields are known',
    bad: v1('sampleRate: 5\n'),
    problem: 'unknown field "sampleRate"',
    good: v1(''),
  },
]

describe('TracingConfiguration rules', () => {
  for (const c of cases) {
    it(`refuses a file that breaks the rule: ${c.rule}`, () => assert.deepEqual(problems(c.bad), [c.problem]))
    it(`accepts a file that keeps the rule: ${c.rule}`, () => assert.deepEqual(problems(c.good), []))
  }
})

describe('loadTracingConfiguration', () => {
  it('returns the endpoint and sampling rate as written, unset when left out', () => {
    assert.deepEqual(loadTracingConfiguration(v1('endpoint: localhost:4317\nsamplingRatePerMillion: 100\n'), 't'), {
      endpoint: 'localhost:4317',
      samplingRatePerMillion: 100,
    })
    assert.deepEqual(loadTracingConfiguration(v1(''), 't'), {})
  })

  it('reads the v1beta1 and v1alpha1 versions too', () => {
    for (const version of ['v1beta1', 'v1alpha1']) {
      const text = `apiVersion: apiserver.config.k8s.io/${version}\nkind: TracingConfiguration\nsamplingRatePerMillion: 7\n`
      assert.equal(loadTracingConfiguration(text, 't').samplingRatePerMillion, 7)
    }
  })

  it('lists both problems of a file at once', () => {
    assert.deepEqual(problems(v1('endpoint: https://x\nsamplingRatePerMillion: -5\n')), [
      'samplingRatePerMillion: Invalid value: -5: sampling rate must be positive',
      `endpoint: Invalid value: "https://x": unsupported scheme: https.  ${GRPC_NAMES}`,
    ])
  })
})
