/**
 * MutatingAdmissionWebhook (upstream's webhook/mutating dispatcher): the
 * matching webhooks are called one after the other, each seeing what the
 * ones before it made; a JSONPatch answer is applied to the object (in the
 * version the webhook asked for, defaulted again, then converted back).
 *
 * `reinvocationPolicy: IfNeeded`: when a webhook changes the object, the
 * IfNeeded webhooks called before it are called once more after the first
 * pass, so that each sees the final object (a webhook called for the first
 * time in that round is never added).
 */
import { internalError, StatusError } from '../../machinery/status-error.js'
import { applyJsonPatch, parseJsonPatch } from '../../patch/json-patch.js'
import type { KubeObject } from '../../machinery/object.js'
import type { AdmissionAttributes } from '../attributes.js'
import type { MutatingAdmission } from '../mutating.js'
import { callWebhook } from './call.js'
import { observeWebhookCall } from './call-metrics.js'
import { CallingWebhookError, dryRunUnsupported, webhookDenied } from './errors.js'
import { admissionRequest, type Invocation, invocationFor, VersionedObjects, type WebhookDeps } from './invocation.js'
import { admissionReview, negotiateReviewVersion } from './review.js'
import { isExemptFromWebhooks } from './rules.js'
import { recordAnswer, sideEffectsAllowDryRun } from './shared.js'
import { valueAtOnce } from '../../machinery/time-slice.js'

interface Reinvocation {
  /** IfNeeded webhooks called since the object last changed. */
  previouslyInvoked: Set<string>
  /** Those to call again in the second round. */
  reinvoke: Set<string>
}

/** The webhook's own refusal, told apart from other errors for the metrics; the request gets `status`. */
class WebhookDenial extends Error {
  constructor(readonly status: StatusError) {
    super(status.message)
  }
}

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)

/** Calls one webhook and applies its patch; answers whether the object changed. */
async function callMutating(a: AdmissionAttributes, invocation: Invocation, objects: VersionedObjects, deps: WebhookDeps): Promise<boolean> {
  const { hook, entry } = invocation
  if (a.dryRun && !sideEffectsAllowDryRun(hook.sideEffects)) throw dryRunUnsupported(hook.name)
  const version = negotiateReviewVersion(hook.admissionReviewVersions)
  if (!version) throw new CallingWebhookError(hook.name, 'could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)', 400)
  const uid = crypto.randomUUID()
  const request = await admissionRequest(a, invocation, objects, uid)
  const answer = await callWebhook(hook, admissionReview(version, request), version, uid, deps)
  recordAnswer(a, hook.name, answer)
  if (!answer.allowed) throw new WebhookDenial(webhookDenied(hook.name, answer.result))
  if (answer.patch === undefined) return false
  let ops: ReturnType<typeof parseJsonPatch>
  try {
    ops = parseJsonPatch(answer.patch)
  } catch (err) {
    throw new CallingWebhookError(hook.name, `received undecodable patch in webhook response: ${err instanceof Error ? err.message : String(err)}`)
  }
  if (!ops.length) return false
  const object = request.object as KubeObject | null
  if (!object) throw internalError(`admission webhook "${hook.name}" attempted to modify the object, which is not supported for this operation`)
  if (answer.patchType !== 'JSONPatch') throw new CallingWebhookError(hook.name, `unsupported patch type "${answer.patchType ?? ''}"`)
  let patched: KubeObject
  try {
    // The patch leaves `object` as it is and gives a result of its own: no copy needed first.
    patched = (await applyJsonPatch(object, ops)) as KubeObject
  } catch (err) {
    throw internalError(err instanceof StatusError ? err.message : err)
  }
  // The patched object is defaulted as a decoded one is (upstream runs the scheme's defaulting again).
  if (patched.kind === entry.kind) valueAtOnce(entry.strategy.applyDefaults?.(patched))
  objects.current = { entry, object: patched }
  return !sameJson(object, patched)
}

export function mutatingWebhookAdmission(deps: WebhookDeps): MutatingAdmission {
  async function round(a: AdmissionAttributes, objects: VersionedObjects, state: Reinvocation, again: boolean): Promise<boolean> {
    let changedAny = false
    for (const hook of deps.index.webhooks()) {
      if (again && !state.reinvoke.has(hook.uid)) continue
      const invocation = await invocationFor(hook, a, objects, deps)
      if (!invocation) continue
      let changed = false
      const started = performance.now()
      try {
        changed = await callMutating(a, invocation, objects, deps)
        observeWebhookCall(deps.metrics, hook, 'admit', a.operation, started, { allowed: true })
      } catch (err) {
        observeWebhookCall(deps.metrics, hook, 'admit', a.operation, started, err instanceof WebhookDenial ? { denied: err.status } : { failed: err })
        if (err instanceof WebhookDenial) throw err.status
        if (!(err instanceof CallingWebhookError)) throw err
        if (hook.failurePolicy !== 'Ignore') {
          deps.logger.warn({ webhook: hook.name, err: err.message }, 'Failed calling webhook, failing closed')
          throw internalError(err)
        }
        deps.logger.warn({ webhook: hook.name, err: err.message }, 'Failed calling webhook, failing open')
      }
      if (changed) {
        changedAny = true
        for (const uid of state.previouslyInvoked) state.reinvoke.add(uid)
        state.previouslyInvoked.clear()
      }
      if (hook.reinvocationPolicy === 'IfNeeded') state.previouslyInvoked.add(hook.uid)
    }
    return changedAny
  }

  return {
    name: 'MutatingAdmissionWebhook',
    handles: () => true,
    async admit(a) {
      if (isExemptFromWebhooks(a.entry.group, a.entry.resource)) return
      if (!deps.index.webhooks().length) return
      const objects = new VersionedObjects(a)
      const state: Reinvocation = { previouslyInvoked: new Set(), reinvoke: new Set() }
      const changed = await round(a, objects, state, false)
      if (changed && state.reinvoke.size) await round(a, objects, state, true)
      if (changed && a.object) a.object = (await objects.final()) as KubeObject
    },
  }
}
