/**
 * An OTLP trace collector for tests: a gRPC server on 127.0.0.1 serving
 * opentelemetry.proto.collector.trace.v1.TraceService/Export from a minimal
 * .proto (test/fixtures/otlp), keeping every span it is sent with hex ids
 * and plain attribute values.
 */
import { join } from 'node:path'
import { type GrpcObject, loadPackageDefinition, Server, ServerCredentials, type ServiceClientConstructor, type UntypedHandleCall } from '@grpc/grpc-js'
import { loadSync } from '@grpc/proto-loader'

export interface CollectedSpan {
  traceId: string
  spanId: string
  parentSpanId: string
  name: string
  /** OTLP's SpanKind: 2 server, 3 client. */
  kind: number
  attributes: Record<string, string | number | boolean>
  links: { traceId: string; spanId: string }[]
  /** 2 is an error. */
  statusCode: number
  service: string
}

export interface OtlpCollector {
  endpoint: string
  spans: CollectedSpan[]
  close(): Promise<void>
}

const PROTO = join(import.meta.dirname, '..', 'fixtures', 'otlp', 'trace-service.proto')

interface AnyValue {
  stringValue?: string
  boolValue?: boolean
  intValue?: string
  doubleValue?: number
}
interface KeyValue {
  key: string
  value?: AnyValue
}

const hex = (bytes: Buffer | undefined): string => (bytes ? Buffer.from(bytes).toString('hex') : '')

function plain(attrs: KeyValue[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {}
  for (const { key, value } of attrs ?? []) {
    const v = value?.stringValue ?? value?.boolValue ?? (value?.intValue !== undefined ? Number(value.intValue) : value?.doubleValue)
    if (v !== undefined) out[key] = v
  }
  return out
}

export async function startOtlpCollector(): Promise<OtlpCollector> {
  const definition = loadSync(PROTO, { keepCase: false, longs: String, defaults: false, oneofs: true })
  const pkg = loadPackageDefinition(definition) as unknown as { opentelemetry: { proto: { collector: { trace: { v1: GrpcObject } } } } }
  const service = (pkg.opentelemetry.proto.collector.trace.v1['TraceService'] as ServiceClientConstructor).service
  const collector: OtlpCollector = { endpoint: '', spans: [], close: async () => {} }
  const server = new Server()
  const exportHandler: UntypedHandleCall = (call: any, callback: any) => {
    for (const rs of call.request.resourceSpans ?? []) {
      const serviceName = String(plain(rs.resource?.attributes)['service.name'] ?? '')
      for (const ss of rs.scopeSpans ?? []) {
        for (const span of ss.spans ?? []) {
          collector.spans.push({
            traceId: hex(span.traceId),
            spanId: hex(span.spanId),
            parentSpanId: hex(span.parentSpanId),
            name: span.name,
            kind: span.kind ?? 0,
            attributes: plain(span.attributes),
            links: (span.links ?? []).map((l: { traceId: Buffer; spanId: Buffer }) => ({ traceId: hex(l.traceId), spanId: hex(l.spanId) })),
            statusCode: span.status?.code ?? 0,
            service: serviceName,
          })
        }
      }
    }
    callback(null, {})
  }
  server.addService(service, { Export: exportHandler })
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound))),
  )
  collector.endpoint = `127.0.0.1:${port}`
  collector.close = () => new Promise<void>((resolve) => server.tryShutdown(() => resolve()))
  return collector
}
