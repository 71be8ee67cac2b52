/**
 * TracingConfiguration, the file of `--tracing-config-file` (spec:
 * TracingConfiguration, file kind and embedded structure): where spans go
 * and how many are sampled. The rules are upstream's
 * ValidateTracingConfiguration; field paths start at the top of the file,
 * where the embedded members sit.
 */
import { z } from 'zod'
import { type FieldError, FieldPath, invalid } from '../machinery/field.js'
import { CONFIG_GROUP, type ConfigKind, decodeConfig } from './decode.js'
import { goPointer, int32 } from './fields.js'
import { GoUrlError, parseGoUrl } from './go-url.js'

const tracingSchema = z.lazy(() => z.strictObject({
  endpoint: goPointer(z.string()),
  samplingRatePerMillion: goPointer(int32),
}))

export interface TracingConfiguration {
  /**
   * The OTLP gRPC collector, insecure (no TLS): `host:port`, or a gRPC name
   * with a `dns`, `unix` or `unix-abstract` scheme. Unset means `localhost:4317`.
   */
  endpoint?: string | undefined
  /** Samples per million spans, 0..1000000. Unset: follow the parent span's decision, and never sample otherwise. */
  samplingRatePerMillion?: number | undefined
}

const MAX_SAMPLING_RATE_PER_MILLION = 1_000_000

// gRPC's name syntax (https://github.com/grpc/grpc/blob/master/doc/naming.md); a bare host:port is a dns name.
const ENDPOINT_SCHEMES = new Set(['dns', 'unix', 'unix-abstract'])

function endpointProblem(endpoint: string): FieldError | undefined {
  const path = FieldPath.root('endpoint')
  const named = endpoint.includes('//') ? endpoint : `dns://${endpoint}`
  let scheme: string
  try {
    scheme = parseGoUrl(named).scheme
  } catch (err) {
    if (!(err instanceof GoUrlError)) throw err
    return invalid(path, named, err.message)
  }
  if (ENDPOINT_SCHEMES.has(scheme)) return undefined
  return invalid(
    path,
    named,
    `unsupported scheme: ${scheme}.  Options are none, dns, unix, or unix-abstract.  See https://github.com/grpc/grpc/blob/master/doc/naming.md`,
  )
}

function validateTracing(config: TracingConfiguration): FieldError[] {
  const errs: FieldError[] = []
  const rate = config.samplingRatePerMillion
  const ratePath = FieldPath.root('samplingRatePerMillion')
  if (rate !== undefined && rate < 0) errs.push(invalid(ratePath, rate, 'sampling rate must be positive'))
  if (rate !== undefined && rate > MAX_SAMPLING_RATE_PER_MILLION) {
    errs.push(invalid(ratePath, rate, 'sampling rate per million must be less than or equal to one million'))
  }
  const endpoint = config.endpoint === undefined ? undefined : endpointProblem(config.endpoint)
  if (endpoint) errs.push(endpoint)
  return errs
}

/** Upstream reads the kind in all three versions of the group; the members are the same in each. */
const TracingKind: ConfigKind<TracingConfiguration> = {
  kind: 'TracingConfiguration',
  apiVersions: [`${CONFIG_GROUP}/v1`, `${CONFIG_GROUP}/v1beta1`, `${CONFIG_GROUP}/v1alpha1`],
  schema: tracingSchema,
  validate: validateTracing,
}

/** Reads and validates the text of a TracingConfiguration file. Throws ConfigFileError listing every problem. */
export function loadTracingConfiguration(text: string, source: string): TracingConfiguration {
  return decodeConfig(text, source, TracingKind)
}
