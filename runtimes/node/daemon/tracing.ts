/**
 * The daemon's tracing (`--tracing-config-file`), as upstream's
 * component-base/tracing sets it up: the OpenTelemetry SDK with a batching
 * span processor and the OTLP gRPC exporter to `endpoint` (default
 * `localhost:4317`, always without TLS, as the spec says), a parent-based
 * sampler whose root decision samples `samplingRatePerMillion` per million
 * traces (never, when unset), and a resource naming the service
 * `apiserver`. A context manager on AsyncLocalStorage carries a request's
 * span through its async work, and the W3C propagator puts `traceparent` on
 * the server's outgoing webhook calls.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import { hostname } from 'node:os'
import { credentials } from '@grpc/grpc-js'
import { type Context, context, type ContextManager, propagation, ROOT_CONTEXT, trace, type TracerProvider } from '@opentelemetry/api'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { AlwaysOffSampler, BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, type Sampler, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base'
import type { TracingConfiguration } from '../../../core/config/tracing.js'

/** The collector when the file names none (OTLP gRPC's default). */
export const DEFAULT_TRACING_ENDPOINT = 'localhost:4317'

/** Node's AsyncLocalStorage behind OpenTelemetry's ContextManager: the active context follows awaits and callbacks. */
class AsyncLocalContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>()

  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    return this.storage.run(ctx, () => fn.apply(thisArg, args))
  }

  bind<T>(ctx: Context, target: T): T {
    if (typeof target !== 'function') return target
    const run = (...args: unknown[]) => this.with(ctx, () => (target as (...a: unknown[]) => unknown)(...args))
    return run as T
  }

  enable(): this {
    return this
  }

  disable(): this {
    this.storage.disable()
    return this
  }
}

/** The sampler the spec describes: follow the parent; without one, the configured rate, or never. */
export function tracingSampler(config: TracingConfiguration): Sampler {
  const rate = config.samplingRatePerMillion
  const root = rate === undefined || rate <= 0 ? new AlwaysOffSampler() : new TraceIdRatioBasedSampler(rate / 1_000_000)
  return new ParentBasedSampler({ root })
}

/** The exporter's target: a gRPC name (`host:port`, `dns:///host:port`, `unix:///path`) as the OTLP exporter takes it. */
function exporterUrl(endpoint: string): string {
  if (endpoint.startsWith('unix:') || endpoint.startsWith('unix-abstract:')) return endpoint
  const hostPort = endpoint.replace(/^dns:\/\/[^/]*\//, '')
  return `http://${hostPort}`
}

export interface NodeTracing {
  tracerProvider: TracerProvider
  /** Exports what is buffered now. */
  flush(): Promise<void>
  /** Exports what is still buffered, then stops. */
  shutdown(): Promise<void>
}

let installedGlobals = false

/** Builds the SDK for a TracingConfiguration and makes it the process's (context manager, propagator, provider). */
export function startNodeTracing(config: TracingConfiguration): NodeTracing {
  const exporter = new OTLPTraceExporter({ url: exporterUrl(config.endpoint ?? DEFAULT_TRACING_ENDPOINT), credentials: credentials.createInsecure() })
  const provider = new BasicTracerProvider({
    sampler: tracingSampler(config),
    resource: resourceFromAttributes({ 'service.name': 'apiserver', 'host.name': hostname() }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  })
  if (!installedGlobals) {
    context.setGlobalContextManager(new AsyncLocalContextManager())
    propagation.setGlobalPropagator(new W3CTraceContextPropagator())
    installedGlobals = true
  }
  trace.disable()
  trace.setGlobalTracerProvider(provider)
  return {
    tracerProvider: provider,
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  }
}
