/**
 * EventRateLimit: creates of core Events are limited by token buckets, per
 * server, namespace, user, or source and involved object, as configured;
 * an Event past its bucket is refused with 429. Dry-run creates take no
 * token. Per-key buckets are kept for the `cacheSize` most recent keys.
 *
 * Configuration (required): `apiVersion: eventratelimit.admission.k8s.io/v1alpha1`,
 * `kind: Configuration`, `limits: [{ type, qps, burst, cacheSize }]`.
 */
import { z } from 'zod'
import { type ConfigKind, decodeConfigDocument } from '../../config/decode.js'
import { StatusError } from '../../machinery/status-error.js'
import { isPlainObject } from '../../machinery/object.js'
import { type FieldError, FieldPath, invalid, notSupported } from '../../machinery/field.js'
import type { AdmissionAttributes } from '../attributes.js'
import type { ValidatingAdmission } from '../validating.js'
import { isResource, on } from './pods.js'

const LIMIT_TYPES = ['Namespace', 'Server', 'SourceAndObject', 'User'] as const
type LimitType = (typeof LIMIT_TYPES)[number]
/** Upstream's default number of keys remembered per limit. */
export const DEFAULT_CACHE_SIZE = 4096

export interface EventRateLimitConfiguration {
  limits: { type: string; qps: number; burst: number; cacheSize: number }[]
}

const limitSchema = z.lazy(() => z.strictObject({
  type: z.string().nullish().transform((v) => v ?? ''),
  qps: z.number().nullish().transform((v) => v ?? 0),
  burst: z.number().int().nullish().transform((v) => v ?? 0),
  cacheSize: z.number().int().nullish().transform((v) => v ?? 0),
}))

function validate(config: EventRateLimitConfiguration): FieldError[] {
  const limits = FieldPath.root('limits')
  const errs: FieldError[] = []
  if (config.limits.length === 0) errs.push(invalid(limits, [], 'must not be empty'))
  config.limits.forEach((limit, i) => {
    const at = limits.index(i)
    if (!(LIMIT_TYPES as readonly string[]).includes(limit.type)) errs.push(notSupported(at.child('type'), limit.type, LIMIT_TYPES))
    if (limit.burst <= 0) errs.push(invalid(at.child('burst'), limit.burst, 'must be positive'))
    if (limit.cacheSize < 0) errs.push(invalid(at.child('cacheSize'), limit.cacheSize, 'must not be negative'))
  })
  return errs
}

const ConfigurationKind: ConfigKind<EventRateLimitConfiguration> = {
  kind: 'Configuration',
  apiVersions: ['eventratelimit.admission.k8s.io/v1alpha1'],
  schema: z.strictObject({ limits: z.array(limitSchema).nullish().transform((v) => v ?? []) }),
  validate,
}

export function decodeEventRateLimitConfiguration(raw: unknown, source: string): EventRateLimitConfiguration {
  return decodeConfigDocument(raw, source, ConfigurationKind)
}

/** A token bucket: `burst` tokens, refilled at `qps` per second. */
class Bucket {
  private tokens: number
  private at: number
  constructor(
    private readonly qps: number,
    private readonly burst: number,
    now: number,
  ) {
    this.tokens = burst
    this.at = now
  }
  take(now: number): boolean {
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.at) / 1000) * this.qps)
    this.at = now
    if (this.tokens < 1) return false
    this.tokens -= 1
    return true
  }
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '')

function keyOf(type: LimitType, a: AdmissionAttributes): string {
  switch (type) {
    case 'Server':
      return ''
    case 'Namespace':
      return a.namespace
    case 'User':
      return a.user.username
    case 'SourceAndObject': {
      const source = isPlainObject(a.object?.['source']) ? a.object['source'] : {}
      const involved = isPlainObject(a.object?.['involvedObject']) ? a.object['involvedObject'] : {}
      return [source['component'], source['host'], involved['kind'], involved['namespace'], involved['name'], involved['uid'], involved['apiVersion']]
        .map(str)
        .join('')
    }
  }
}

/** One limit's buckets, the least recently used key forgotten first. */
class Enforcer {
  private readonly buckets = new Map<string, Bucket>()
  constructor(
    readonly type: LimitType,
    private readonly qps: number,
    private readonly burst: number,
    private readonly cacheSize: number,
  ) {}
  accept(key: string, now: number): boolean {
    let bucket = this.buckets.get(key)
    if (bucket) this.buckets.delete(key)
    else bucket = new Bucket(this.qps, this.burst, now)
    this.buckets.set(key, bucket)
    if (this.buckets.size > this.cacheSize) this.buckets.delete(this.buckets.keys().next().value as string)
    return bucket.take(now)
  }
}

export function eventRateLimit(configuration: EventRateLimitConfiguration, now: () => Date): ValidatingAdmission {
  const enforcers = configuration.limits.map(
    (l) => new Enforcer(l.type as LimitType, l.qps, l.burst, l.type === 'Server' ? 1 : l.cacheSize || DEFAULT_CACHE_SIZE),
  )
  return {
    name: 'EventRateLimit',
    handles: on('CREATE'),
    validate(a) {
      if (!isResource(a, '', 'events') || a.subresource || a.dryRun) return
      const at = now().getTime()
      for (const enforcer of enforcers) {
        const key = keyOf(enforcer.type, a)
        if (!enforcer.accept(key, at))
          throw new StatusError(429, 'TooManyRequests', `Too many requests: limit reached on type ${enforcer.type} for key ${key}`)
      }
    },
  }
}
