/**
 * The daemon's /metrics scraped as Prometheus would, through kubectl with
 * the admin kubeconfig: the text parses strictly, kubectl's own requests
 * are counted with upstream's labels, the Node process's metrics come
 * along, and --disabled-metrics switches a family off.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { parsePrometheusText, sampleValue } from '../helpers/prometheus-text.js'
import { Daemon } from './daemon.js'

describe('the metrics of the daemon', () => {
  let daemon: Daemon | undefined

  before(async () => {
    daemon = await Daemon.start(['--disabled-metrics=apiserver_response_sizes'])
  })
  after(async () => {
    await daemon?.stop()
  })

  it('serves upstream request metrics and the Node process metrics, without the disabled family', async () => {
    await daemon!.ok('create', 'configmap', 'scraped', '--from-literal=k=v')
    await daemon!.ok('get', 'configmap', 'scraped')
    const families = parsePrometheusText(await daemon!.ok('get', '--raw', '/metrics'))
    const created = sampleValue(families, 'apiserver_request_total', {
      verb: 'POST', group: '', version: 'v1', resource: 'configmaps', subresource: '', scope: 'resource', component: 'apiserver', dry_run: '', code: '201',
    })
    assert.equal(created, 1)
    assert.equal(families.get('apiserver_request_duration_seconds')?.type, 'histogram')
    assert.equal(families.get('process_cpu_user_seconds_total')?.type, 'counter')
    assert.ok(families.has('process_resident_memory_bytes'))
    assert.ok([...families.keys()].some((name) => name.startsWith('nodejs_')))
    assert.equal(families.has('apiserver_response_sizes'), false)
  })
})
