/**
 * Field validation (`?fieldValidation=`): what a write does with fields the
 * kind's type does not have and fields its body holds twice. `Strict`
 * refuses the request (400), `Warn` (upstream's default) answers with a
 * Warning header per problem, `Ignore` drops them silently.
 */
import { goStrconvQuote } from '../machinery/go-strconv.js'
import { badRequest } from '../machinery/status-error.js'
import type { ResourceEntry } from '../resources/catalogue.js'
import type { RequestContext } from './request-context.js'

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore'

const MODES: readonly FieldValidation[] = ['Ignore', 'Strict', 'Warn']

/** The request's mode; absent or empty means Warn, as upstream. */
export function fieldValidationOf(params: URLSearchParams): FieldValidation {
  const value = params.get('fieldValidation')
  if (!value) return 'Warn'
  if (!(MODES as readonly string[]).includes(value))
    throw badRequest(`fieldValidation: Unsupported value: ${JSON.stringify(value)}: supported values: "Ignore", "Strict", "Warn"`)
  return value as FieldValidation
}

/**
 * Acts on what decoding a body into `entry`'s type found: the unknown
 * fields' paths, then the duplicates the body parser saw.
 */
export function enforceFieldValidation(ctx: RequestContext, entry: ResourceEntry, unknownFields: readonly string[]): void {
  const mode = ctx.fieldValidation ?? 'Ignore'
  if (mode === 'Ignore') return
  // `%q` of the path, as upstream's strict decoder words it: a control character as Go escapes it (`\x7f`).
  const problems = [...unknownFields.map((path) => `unknown field ${goStrconvQuote(path)}`), ...(ctx.bodyProblems ?? [])]
  if (problems.length === 0) return
  if (mode === 'Strict') {
    const version = entry.version
    throw badRequest(`${entry.kind} in version ${JSON.stringify(version)} cannot be handled as a ${entry.kind}: strict decoding error: ${problems.join(', ')}`)
  }
  // Each text once, found in a set: a body of 30,000 duplicate fields had compared every text with all before it (9 s of the thread).
  const warnings = (ctx.warnings ??= [])
  const seen = new Set(warnings)
  for (const p of problems) {
    if (seen.has(p)) continue
    seen.add(p)
    warnings.push(p)
  }
}
