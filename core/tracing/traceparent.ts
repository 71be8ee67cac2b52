/**
 * The W3C Trace Context `traceparent` header (https://www.w3.org/TR/trace-context/),
 * read here so that core needs nothing beyond @opentelemetry/api: version 00's
 * four fields, or a later version's first four (the spec asks readers to
 * accept those), all-zero ids refused. `tracestate` is not carried.
 */
import { type SpanContext, TraceFlags } from '@opentelemetry/api'

const TRACEPARENT = /^([\da-f]{2})-([\da-f]{32})-([\da-f]{16})-([\da-f]{2})(-.*)?$/

/** The remote span a request's `traceparent` names, or undefined when it names none validly. */
export function parseTraceparent(header: string | null | undefined): SpanContext | undefined {
  const match = TRACEPARENT.exec(header?.trim() ?? '')
  if (!match) return undefined
  const [, version, traceId, spanId, flags, rest] = match as unknown as [string, string, string, string, string, string | undefined]
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined
  return {
    traceId,
    spanId,
    traceFlags: parseInt(flags, 16) & TraceFlags.SAMPLED,
    isRemote: true,
  }
}
