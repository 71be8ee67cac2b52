/**
 * The ValidatingAdmissionPolicy plugin (upstream's policy/validating
 * dispatcher and validator): for each policy whose matchConstraints select
 * the request, each of its bindings whose matchResources select it, and
 * each parameter object of the binding: the match conditions, then every
 * validation, then the audit annotations. A failed validation acts as the
 * binding's validationActions say: Deny refuses the request (the first
 * denial's message, with its reason and status code), Warn adds a Warning
 * header, Audit an audit annotation. An expression that fails, or a binding
 * that cannot be configured (its parameters missing), counts as a denial
 * under failurePolicy Fail and is ignored under Ignore.
 */
import type { Authorizer as ServerAuthorizer } from '../../authz/authorizer.js'
import { StatusError, type StatusReason, qualifiedResource } from '../../machinery/status-error.js'
import type { KubeObject } from '../../machinery/object.js'
import type { AdmissionAttributes } from '../attributes.js'
import type { ValidatingAdmission } from '../validating.js'
import { fromCel } from './cel-values.js'
import { ExpressionError, PolicyEvaluation, type PolicyVariable, newCostBudget } from './evaluation.js'
import { type MatchResources, type MatchedAs, matchRequest } from './matching.js'
import { type ParamKind, type ParamRef, collectParams } from './params.js'
import { type PolicySource, requestObjectIn, requestView } from './source.js'

const MAX_MESSAGE_BYTES = 5 * 1024
const MAX_AUDIT_VALUE_LENGTH = 10 * 1024
export const VALIDATION_FAILURE_ANNOTATION = 'validation.policy.admission.k8s.io/validation_failure'

interface Validation {
  expression: string
  message?: string
  messageExpression?: string
  reason?: StatusReason
}

interface PolicySpec {
  paramKind?: ParamKind
  matchConstraints?: MatchResources
  validations?: Validation[]
  auditAnnotations?: { key: string; valueExpression: string }[]
  variables?: PolicyVariable[]
  matchConditions?: { name: string; expression: string }[]
  failurePolicy?: 'Fail' | 'Ignore'
}

interface BindingSpec {
  policyName?: string
  paramRef?: ParamRef
  matchResources?: MatchResources
  validationActions?: ('Deny' | 'Warn' | 'Audit')[]
}

/** One denial: the policy, the binding when there is one, why, and the reason that sets the status code. */
interface Denial {
  policy: string
  binding?: string
  message: string
  reason?: StatusReason
}

const REASON_CODES: Partial<Record<StatusReason, number>> = { Forbidden: 403, Unauthorized: 401, RequestEntityTooLarge: 413, Invalid: 422 }

/** upstream's admission.NewForbidden name: the request's, else the object's name or generateName. */
function subjectName(attrs: AdmissionAttributes): string {
  if (attrs.name) return attrs.name
  const meta = attrs.object?.metadata
  if (!meta) return ''
  return meta.name || (meta.generateName as string | undefined) || 'Unknown'
}

export function denialError(attrs: AdmissionAttributes, denial: Denial, kind: string): StatusError {
  const why = denial.binding
    ? `${kind} '${denial.policy}' with binding '${denial.binding}' denied request: ${denial.message}`
    : `${kind} '${denial.policy}' denied request: ${denial.message}`
  const gr = { group: attrs.entry.group, resource: attrs.entry.resource }
  const name = subjectName(attrs)
  const subject = name ? `${qualifiedResource(gr)} "${name}"` : qualifiedResource(gr)
  // A failed validation carries its reason (Invalid unless it names another); an error carries none: 403, as at 1.32.
  const reason = denial.reason ?? 'Forbidden'
  // Upstream adds the denial as a cause: kubectl prints an Invalid error's causes (`The deployments "x" is invalid: : ...`).
  return new StatusError(REASON_CODES[reason] ?? 403, reason, `${subject} is forbidden: ${why}`, {
    name,
    ...(gr.group ? { group: gr.group } : {}),
    kind: gr.resource,
    causes: [{ message: why }],
  })
}

const trimmedMessage = (value: unknown): string => {
  if (typeof value !== 'string') return ''
  const text = value.trim()
  return text.length > MAX_MESSAGE_BYTES || text.includes('\n') ? '' : text
}

/** Runs the match conditions; true when all hold. Throws ExpressionError for one that fails. */
export async function conditionsHold(evaluation: PolicyEvaluation, conditions: PolicySpec['matchConditions']): Promise<boolean> {
  let failure: ExpressionError | undefined
  for (const condition of conditions ?? []) {
    try {
      if ((await evaluation.evaluate(condition.expression)) !== true) return false
    } catch (err) {
      // A false condition wins over an error in another, as upstream's matcher decides.
      failure ??= err instanceof ExpressionError ? err : new ExpressionError(String(err))
    }
  }
  if (failure) throw failure
  return true
}

interface Outcome {
  /** Failed validations with their index. */
  failures: { index: number; message: string; reason?: StatusReason }[]
  /** Errors that count under the failure policy. */
  errors: string[]
  annotations: [key: string, value: string][]
}

async function evaluatePolicy(spec: PolicySpec, evaluation: PolicyEvaluation): Promise<Outcome> {
  const outcome: Outcome = { failures: [], errors: [], annotations: [] }
  try {
    if (!(await conditionsHold(evaluation, spec.matchConditions))) return outcome
  } catch (err) {
    outcome.errors.push((err as Error).message)
    return outcome
  }
  for (const [index, validation] of (spec.validations ?? []).entries()) {
    let result: unknown
    try {
      result = await evaluation.evaluate(validation.expression)
    } catch (err) {
      outcome.errors.push((err as Error).message)
      if (err instanceof ExpressionError && err.outOfBudget) return outcome
      continue
    }
    if (result === true) continue
    let message = ''
    if (validation.messageExpression) {
      try {
        message = trimmedMessage(await evaluation.evaluate(validation.messageExpression))
      } catch (err) {
        if (err instanceof ExpressionError && err.outOfBudget) {
          outcome.errors.push(`failed messageExpression: ${err.message}`)
          continue
        }
      }
    }
    if (!message && validation.message) message = validation.message.trim()
    if (!message) message = `failed expression: ${validation.expression.trim()}`
    outcome.failures.push({ index, message, reason: validation.reason ?? 'Invalid' })
  }
  for (const annotation of spec.auditAnnotations ?? []) {
    try {
      const value = fromCel(await evaluation.evaluate(annotation.valueExpression))
      if (value === null) continue
      if (typeof value !== 'string') {
        outcome.errors.push(
          `valueExpression '${annotation.valueExpression}' resulted in unsupported return type: ${typeof value}. Return type must be either string or null.`,
        )
        continue
      }
      if (value.trim()) outcome.annotations.push([annotation.key, value.trim().slice(0, MAX_AUDIT_VALUE_LENGTH)])
    } catch (err) {
      outcome.errors.push((err as Error).message)
    }
  }
  return outcome
}

/** Adds an audit annotation unless one of that key is there (upstream's AddAnnotation keeps the first). */
function annotate(attrs: AdmissionAttributes, key: string, value: string): void {
  if (attrs.auditAnnotations && !(key in attrs.auditAnnotations)) attrs.auditAnnotations[key] = value
}

export interface PolicyPluginDeps {
  source: PolicySource
  authorizer: ServerAuthorizer
}

/** The object and old object as the matched version shows them. */
export async function versionedObjects(attrs: AdmissionAttributes, matched: MatchedAs): Promise<{ object: KubeObject | undefined; oldObject: KubeObject | undefined }> {
  return {
    object: await requestObjectIn(attrs, attrs.object, attrs.entry, matched.entry),
    oldObject: await requestObjectIn(attrs, attrs.oldObject, attrs.entry, matched.entry),
  }
}

export function validatingPolicyAdmission({ source, authorizer }: PolicyPluginDeps): ValidatingAdmission {
  return {
    name: 'ValidatingAdmissionPolicy',
    handles: () => true,
    async validate(attrs) {
      const denials: Denial[] = []
      const uid = crypto.randomUUID()
      const ctx = source.matchContext()
      for (const { policy, bindings } of source.current()) {
        const policyName = policy.metadata.name ?? ''
        const spec = (policy['spec'] ?? {}) as PolicySpec
        const failClosed = (spec.failurePolicy ?? 'Fail') === 'Fail'
        const configError = (message: string, binding?: string): void => {
          if (failClosed) denials.push({ policy: policyName, ...(binding ? { binding } : {}), message })
        }
        const definition = matchRequest(spec.matchConstraints ?? {}, attrs, ctx)
        if ('error' in definition) {
          configError(`failed to configure policy: ${definition.error}`)
          continue
        }
        if (!definition.matches) continue
        const versioned = await versionedObjects(attrs, definition.as)
        const collected = new Map<string, string[]>()
        for (const binding of bindings) {
          const bindingName = binding.metadata.name ?? ''
          const bindingSpec = (binding['spec'] ?? {}) as BindingSpec
          if (bindingSpec.matchResources) {
            const bound = matchRequest(bindingSpec.matchResources, attrs, ctx)
            if ('error' in bound) {
              configError(`failed to configure binding: ${bound.error}`, bindingName)
              continue
            }
            if (!bound.matches) continue
          }
          const params = await collectParams(spec.paramKind, bindingSpec.paramRef, attrs.namespace, source.params)
          if ('error' in params) {
            configError(`failed to configure binding: ${params.error}`, bindingName)
            continue
          }
          const namespace = attrs.namespace ? source.namespace(attrs.namespace) : undefined
          for (const param of params.params) {
            let outcome: Outcome
            try {
              const view = requestView(attrs, definition.as, versioned, param, namespace, authorizer, uid)
              outcome = await evaluatePolicy(spec, new PolicyEvaluation(view.activation, view.size, spec.variables ?? [], newCostBudget()))
            } catch (err) {
              outcome = { failures: [], errors: [`expression input rejected: ${(err as Error).message}`], annotations: [] }
            }
            for (const error of outcome.errors) configError(error, bindingName)
            for (const failure of outcome.failures) {
              const actions = bindingSpec.validationActions ?? []
              if (actions.includes('Deny'))
                denials.push({ policy: policyName, binding: bindingName, message: failure.message, ...(failure.reason ? { reason: failure.reason } : {}) })
              if (actions.includes('Warn'))
                attrs.warnings.push(`Validation failed for ValidatingAdmissionPolicy '${policyName}' with binding '${bindingName}': ${failure.message}`)
              if (actions.includes('Audit'))
                annotate(
                  attrs,
                  VALIDATION_FAILURE_ANNOTATION,
                  JSON.stringify([{ message: failure.message, policy: policyName, binding: bindingName, expressionIndex: failure.index, validationActions: actions }]),
                )
            }
            for (const [key, value] of outcome.annotations) {
              const values = collected.get(key) ?? []
              if (!values.includes(value)) collected.set(key, [...values, value])
            }
          }
        }
        for (const [key, values] of collected) annotate(attrs, `${policyName}/${key}`, values.join(', '))
      }
      const first = denials[0]
      if (first) throw denialError(attrs, first, 'ValidatingAdmissionPolicy')
    },
  }
}
