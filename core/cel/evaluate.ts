/**
 * Evaluating compiled programs over request-time inputs, shaped as upstream
 * shapes them before cel-go sees them:
 *
 * - JWT claims: integral JSON numbers are CEL `int` (BigInt), as Kubernetes
 *   decodes them to int64, so `claims.exp + 1` and `timestamp(claims.exp)` work;
 * - user and SubjectAccessReview: every declared string or list field is
 *   present (empty when unset), because the library throws `No such key` on
 *   a declared field that is absent where cel-go yields the zero value.
 *   Optional objects (`resourceAttributes`, selectors) stay absent when
 *   unset, so `has(request.resourceAttributes)` keeps its meaning.
 *
 * Each evaluation runs under a cost meter with upstream's per-call limit
 * (meter.ts, through CelProgram.run). Inputs are still bounded: a token's
 * claims are converted to CEL values before any expression runs, and that
 * conversion, which the meter does not see, must not be unbounded.
 */
import type { UserInfo } from '../machinery/object.js'
import type { CelProgram } from './compile.js'
import { SelectorRequirement } from './environments.js'
import { celErrorText } from './errors.js'

/** Bounds on one evaluation's input; a token or review past them is refused, not evaluated. */
export const CEL_INPUT_LIMITS = { maxDepth: 32, maxValues: 10_000 } as const

/** An input or evaluation failure, worded on one line. */
export class CelEvaluationError extends Error {
  constructor(
    readonly expression: string,
    readonly detail: string,
  ) {
    super(`expression '${expression}' resulted in error: ${detail}`)
    this.name = 'CelEvaluationError'
  }
}

class InputTooLarge extends Error {}

const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

/** A JSON value (a JWT payload) as CEL values; throws InputTooLarge past the limits. */
function celValue(value: unknown, depth: number, budget: { left: number }): unknown {
  if (--budget.left < 0) throw new InputTooLarge(`more than ${CEL_INPUT_LIMITS.maxValues} values`)
  if (depth > CEL_INPUT_LIMITS.maxDepth) throw new InputTooLarge(`nested deeper than ${CEL_INPUT_LIMITS.maxDepth} levels`)
  if (typeof value === 'number' && Number.isInteger(value)) {
    const n = BigInt(value)
    return n >= INT64_MIN && n <= INT64_MAX ? n : value
  }
  if (Array.isArray(value)) return value.map((v) => celValue(v, depth + 1, budget))
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[k] = celValue(v, depth + 1, budget)
    return out
  }
  return value
}

export function claimsActivation(claims: Record<string, unknown>): Record<string, unknown> {
  return { claims: celValue(claims, 0, { left: CEL_INPUT_LIMITS.maxValues }) }
}

export function userActivation(user: Partial<UserInfo>): Record<string, unknown> {
  return {
    user: { username: user.username ?? '', uid: user.uid ?? '', groups: user.groups ?? [], extra: user.extra ?? {} },
  }
}

export interface SelectorAttributes {
  rawSelector?: string
  requirements?: { key?: string; operator?: string; values?: string[] }[]
}

/** The SubjectAccessReview v1 spec that match conditions see as `request`. */
export interface SubjectAccessReviewSpec {
  user?: string
  groups?: string[]
  uid?: string
  extra?: Record<string, string[]>
  resourceAttributes?: {
    namespace?: string
    verb?: string
    group?: string
    version?: string
    resource?: string
    subresource?: string
    name?: string
    fieldSelector?: SelectorAttributes
    labelSelector?: SelectorAttributes
  }
  nonResourceAttributes?: { path?: string; verb?: string }
}

function selector(s: SelectorAttributes | undefined): Record<string, unknown> | undefined {
  if (!s || (!s.rawSelector && !s.requirements?.length)) return undefined
  return { rawSelector: s.rawSelector ?? '', requirements: (s.requirements ?? []).map((r) => new SelectorRequirement(r)) }
}

export function requestActivation(spec: SubjectAccessReviewSpec): Record<string, unknown> {
  const request: Record<string, unknown> = {
    user: spec.user ?? '',
    groups: spec.groups ?? [],
    uid: spec.uid ?? '',
    extra: spec.extra ?? {},
  }
  const ra = spec.resourceAttributes
  if (ra) {
    const attrs: Record<string, unknown> = {}
    for (const f of ['namespace', 'verb', 'group', 'version', 'resource', 'subresource', 'name'] as const) attrs[f] = ra[f] ?? ''
    const fields = selector(ra.fieldSelector)
    const labels = selector(ra.labelSelector)
    if (fields) attrs['fieldSelector'] = fields
    if (labels) attrs['labelSelector'] = labels
    request['resourceAttributes'] = attrs
  }
  const nra = spec.nonResourceAttributes
  if (nra) request['nonResourceAttributes'] = { path: nra.path ?? '', verb: nra.verb ?? '' }
  return { request }
}

/**
 * Builds the activation for the program's variable from `input` and runs
 * it; every failure (input too large, no such key, overflow, a wrong
 * runtime type) becomes a CelEvaluationError.
 */
export function evaluate(program: CelProgram, input: Record<string, unknown> | Partial<UserInfo> | SubjectAccessReviewSpec): unknown {
  try {
    const activation =
      program.variable === 'claims'
        ? claimsActivation(input as Record<string, unknown>)
        : program.variable === 'user'
          ? userActivation(input as Partial<UserInfo>)
          : requestActivation(input as SubjectAccessReviewSpec)
    return program.run(activation)
  } catch (err) {
    throw new CelEvaluationError(program.expression, celErrorText(err))
  }
}
