import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { healthResponse } from '../../../core/api/health.js'
import { Metrics } from '../../../core/metrics/metrics.js'
import { observeHealthcheck } from '../../../core/metrics/slis.js'

describe('the health check SLIs', () => {
  it('record a failed check as 0 and an error, a passed one as 1 and a success, as upstream words them', async () => {
    const slis = new Metrics()
    const observe = (check: string, passed: boolean) => observeHealthcheck(slis, check, 'readyz', passed)
    const checks = [
      { name: 'etcd', check: () => Promise.reject(new Error('connection refused')) },
      { name: 'ping', check: () => undefined },
    ]
    const failed = await healthResponse('readyz', checks, new URL('http://x/readyz'), observe)
    assert.equal(failed.status, 500)
    await healthResponse('readyz', [checks[1]!], new URL('http://x/readyz'), observe)
    assert.equal(
      slis.render(),
      [
        '# HELP kubernetes_healthcheck [STABLE] The result of the last run of a health check: 1 when it passed, 0 when it failed, by check name and endpoint (healthz, livez, readyz).',
        '# TYPE kubernetes_healthcheck gauge',
        'kubernetes_healthcheck{name="etcd",type="readyz"} 0',
        'kubernetes_healthcheck{name="ping",type="readyz"} 1',
        '# HELP kubernetes_healthchecks_total [STABLE] Runs of each health check, by check name, endpoint (healthz, livez, readyz) and outcome (success or error).',
        '# TYPE kubernetes_healthchecks_total counter',
        'kubernetes_healthchecks_total{name="etcd",status="error",type="readyz"} 1',
        'kubernetes_healthchecks_total{name="ping",status="success",type="readyz"} 2',
        '',
      ].join('\n'),
    )
  })
})
