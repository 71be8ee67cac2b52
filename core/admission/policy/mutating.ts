/**
 * The MutatingAdmissionPolicy plugin (upstream's policy/mutating, API
 * admissionregistration.k8s.io/v1alpha1 at 1.32): for each policy whose
 * matchConstraints select the request, each binding whose matchResources
 * select it, and each parameter object, the match conditions and then the
 * mutations in order, each seeing the object as the ones before left it:
 *
 * - `ApplyConfiguration`: the expression builds a partial object
 *   (`Object{spec: Object.spec{...}}`) merged into the object as
 *   server-side apply merges (lists by their keys, maps by field), owned by
 *   no manager;
 * - `JSONPatch`: the expression builds RFC 6902 operations
 *   (`[JSONPatch{op: "add", path: "/x", value: ...}]`) applied in order.
 *
 * A failure (an expression error, a patch that does not apply, parameters
 * missing) refuses the request under failurePolicy Fail and is skipped under
 * Ignore. `reinvocationPolicy: IfNeeded`: a policy runs once more when a
 * policy after it changed the object.
 */
import type { Shape } from '../../apply/index.js'
import { shapeOfType } from '../../apply/index.js'
import { mergeValues } from '../../apply/merge.js'
import { applyShapeOf } from '../../apply/crd-shape.js'
import { StatusError, qualifiedResource } from '../../machinery/status-error.js'
import { applyJsonPatch, parseJsonPatch } from '../../patch/json-patch.js'
import type { ResourceEntry } from '../../resources/catalogue.js'
import type { KubeObject } from '../../machinery/object.js'
import type { AdmissionAttributes } from '../attributes.js'
import type { MutatingAdmission } from '../mutating.js'
import { fromCel } from './cel-values.js'
import { PolicyEvaluation, type PolicyVariable, newCostBudget } from './evaluation.js'
import { type MatchResources, type MatchedAs, matchRequest } from './matching.js'
import { type ParamKind, type ParamRef, collectParams } from './params.js'
import { requestObjectIn, requestView } from './source.js'
import { type PolicyPluginDeps, conditionsHold } from './validating.js'

interface Mutation {
  patchType?: 'ApplyConfiguration' | 'JSONPatch'
  applyConfiguration?: { expression?: string }
  jsonPatch?: { expression?: string }
}

interface PolicySpec {
  paramKind?: ParamKind
  matchConstraints?: MatchResources
  variables?: PolicyVariable[]
  mutations?: Mutation[]
  matchConditions?: { name: string; expression: string }[]
  failurePolicy?: 'Fail' | 'Ignore'
  reinvocationPolicy?: 'Never' | 'IfNeeded'
}

interface BindingSpec {
  paramRef?: ParamRef
  matchResources?: MatchResources
}

class MutationError extends Error {}

function shapeOf(entry: ResourceEntry): Shape {
  return entry.schema ? applyShapeOf(entry.schema) : shapeOfType(entry.typeName)
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

/** One mutation applied to `object` (in the matched version); returns the new object. */
async function mutate(mutation: Mutation, object: KubeObject, evaluation: PolicyEvaluation, entry: ResourceEntry): Promise<KubeObject> {
  if (mutation.patchType === 'JSONPatch') {
    const patch = fromCel(await evaluation.evaluate(mutation.jsonPatch?.expression ?? ''))
    let ops
    try {
      ops = parseJsonPatch(patch)
    } catch (err) {
      throw new MutationError(`JSONPatch is invalid: ${(err as Error).message}`)
    }
    try {
      return (await applyJsonPatch(object, ops)) as KubeObject
    } catch (err) {
      throw new MutationError(`JSON Patch: ${(err as Error).message}`)
    }
  }
  const applied = fromCel(await evaluation.evaluate(mutation.applyConfiguration?.expression ?? ''))
  if (!isObject(applied)) throw new MutationError('ApplyConfiguration must evaluate to an object')
  const merged = mergeValues(object, applied, shapeOf(entry))
  if (!isObject(merged)) throw new MutationError('ApplyConfiguration left no object')
  return merged as KubeObject
}

interface Invocation {
  policy: string
  binding: string
  spec: PolicySpec
  matched: MatchedAs
  param: KubeObject | null
}

/** The refusal of a failed mutation, as upstream's policy dispatcher words it. */
function policyError(attrs: AdmissionAttributes, policy: string, binding: string | undefined, message: string): StatusError {
  const gr = { group: attrs.entry.group, resource: attrs.entry.resource }
  const meta = attrs.object?.metadata
  const name = attrs.name || meta?.name || (meta?.generateName as string | undefined) || ''
  const subject = name ? `${qualifiedResource(gr)} "${name}"` : qualifiedResource(gr)
  const why = binding ? `policy '${policy}' with binding '${binding}' denied request: ${message}` : `policy "${policy}" denied request: ${message}`
  return new StatusError(403, 'Forbidden', `${subject} is forbidden: ${why}`, { name, ...(gr.group ? { group: gr.group } : {}), kind: gr.resource })
}

export function mutatingPolicyAdmission({ source, authorizer }: PolicyPluginDeps): MutatingAdmission {
  /** Every (policy, binding, parameter) that applies to the request; configuration errors under Fail refuse it. */
  async function invocations(attrs: AdmissionAttributes): Promise<Invocation[]> {
    const out: Invocation[] = []
    const ctx = source.matchContext()
    for (const { policy, bindings } of source.current()) {
      const policyName = policy.metadata.name ?? ''
      const spec = (policy['spec'] ?? {}) as PolicySpec
      const failClosed = (spec.failurePolicy ?? 'Fail') === 'Fail'
      const definition = matchRequest(spec.matchConstraints ?? {}, attrs, ctx)
      if ('error' in definition) {
        if (failClosed) throw policyError(attrs, policyName, undefined, definition.error)
        continue
      }
      if (!definition.matches) continue
      for (const binding of bindings) {
        const bindingName = binding.metadata.name ?? ''
        const bindingSpec = (binding['spec'] ?? {}) as BindingSpec
        if (bindingSpec.matchResources) {
          const bound = matchRequest(bindingSpec.matchResources, attrs, ctx)
          if ('error' in bound) {
            if (failClosed) throw policyError(attrs, policyName, bindingName, bound.error)
            continue
          }
          if (!bound.matches) continue
        }
        const params = await collectParams(spec.paramKind, bindingSpec.paramRef, attrs.namespace, source.params)
        if ('error' in params) {
          if (failClosed) throw policyError(attrs, policyName, bindingName, params.error)
          continue
        }
        for (const param of params.params) out.push({ policy: policyName, binding: bindingName, spec, matched: definition.as, param })
      }
    }
    return out
  }

  /** Runs one invocation's mutations on `attrs.object`; true when it changed the object. */
  async function run(attrs: AdmissionAttributes, invocation: Invocation, uid: string): Promise<boolean> {
    const { spec, matched } = invocation
    const before = JSON.stringify(attrs.object)
    try {
      let object = (await requestObjectIn(attrs, attrs.object, attrs.entry, matched.entry)) as KubeObject
      const oldObject = await requestObjectIn(attrs, attrs.oldObject, attrs.entry, matched.entry)
      const namespace = attrs.namespace ? source.namespace(attrs.namespace) : undefined
      const budget = newCostBudget()
      const evaluationFor = (current: KubeObject): PolicyEvaluation => {
        const view = requestView(attrs, matched, { object: current, oldObject }, invocation.param, namespace, authorizer, uid)
        return new PolicyEvaluation(view.activation, view.size, spec.variables ?? [], budget)
      }
      if (!(await conditionsHold(evaluationFor(object), spec.matchConditions))) return false
      // Each mutation sees what the ones before it made, so each gets a fresh view (variables included).
      for (const mutation of spec.mutations ?? []) object = await mutate(mutation, object, evaluationFor(object), matched.entry)
      attrs.object = (await requestObjectIn(attrs, object, matched.entry, attrs.entry)) as KubeObject
    } catch (err) {
      if ((spec.failurePolicy ?? 'Fail') === 'Ignore') return false
      if (err instanceof StatusError) throw err
      throw policyError(attrs, invocation.policy, invocation.binding, (err as Error).message)
    }
    return JSON.stringify(attrs.object) !== before
  }

  return {
    name: 'MutatingAdmissionPolicy',
    // A DELETE has no object to mutate.
    handles: (operation) => operation !== 'DELETE',
    async admit(attrs) {
      if (!attrs.object) return
      const all = await invocations(attrs)
      if (all.length === 0) return
      const uid = crypto.randomUUID()
      const changedAt: number[] = []
      for (const [i, invocation] of all.entries()) if (await run(attrs, invocation, uid)) changedAt.push(i)
      // Reinvocation: a policy that asks for it runs once more if a later one changed the object.
      const lastChange = changedAt[changedAt.length - 1]
      if (lastChange === undefined) return
      for (const [i, invocation] of all.entries()) {
        if (i < lastChange && invocation.spec.reinvocationPolicy === 'IfNeeded') await run(attrs, invocation, uid)
      }
    },
  }
}
