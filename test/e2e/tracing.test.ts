/**
 * The daemon's traces as an operator sets them up: `--tracing-config-file`
 * naming an OTLP gRPC collector on loopback with full sampling; kubectl's
 * requests arrive as SERVER spans named as upstream names them, with the
 * storage write of a create under its request's span, and the last spans
 * are exported when the daemon stops.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { type OtlpCollector, startOtlpCollector } from '../integration/otlp-collector.js'
import { Daemon } from './daemon.js'

describe('the traces of the daemon', () => {
  const dir = mkdtempSync(join(tmpdir(), 'apiserver-tracing-'))
  let collector: OtlpCollector
  let daemon: Daemon | undefined

  before(async () => {
    collector = await startOtlpCollector()
    const config = join(dir, 'tracing.yaml')
    writeFileSync(config, `apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nendpoint: ${collector.endpoint}\nsamplingRatePerMillion: 1000000\n`)
    daemon = await Daemon.start([`--tracing-config-file=${config}`])
  })
  after(async () => {
    await daemon?.stop()
    await collector?.close()
  })

  it('exports kubectl\'s requests to the collector, a create with its handler\'s span as a child and the storage write below that', async () => {
    await daemon!.ok('create', 'configmap', 'traced', '--from-literal=k=v')
    await daemon!.stop()
    daemon = undefined
    const create = collector.spans.find((s) => s.name === 'POST /api/v1/namespaces/{:namespace}/configmaps')
    assert.ok(create, JSON.stringify(collector.spans.map((s) => s.name)))
    assert.equal(create.kind, 2)
    assert.equal(create.service, 'apiserver')
    assert.match(String(create.attributes['user_agent.original']), /^kubectl/)
    const handler = collector.spans.find((s) => s.name === 'Create' && s.parentSpanId === create.spanId)
    assert.ok(handler, JSON.stringify(collector.spans.map((s) => s.name)))
    assert.equal(handler.attributes['client'], '127.0.0.1')
    assert.match(String(handler.attributes['protocol']), /^HTTP\/(1\.1|2\.0)$/)
    assert.match(String(handler.attributes['user-agent']), /^kubectl/)
    const write = collector.spans.find((s) => s.name === 'Create etcd3' && s.parentSpanId === handler.spanId)
    assert.ok(write)
    assert.equal(write.traceId, create.traceId)
  })
})
