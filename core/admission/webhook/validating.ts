/**
 * ValidatingAdmissionWebhook (upstream's webhook/validating dispatcher):
 * the matching webhooks are all called at once, on the object as mutating
 * admission and the strategy left it, and the request waits for every
 * answer; any refusal refuses it, as does a failed call under
 * `failurePolicy: Fail`.
 */
import { internalError, StatusError } from '../../machinery/status-error.js'
import type { ValidatingAdmission } from '../validating.js'
import { callWebhook } from './call.js'
import { observeWebhookCall } from './call-metrics.js'
import { CallingWebhookError, dryRunUnsupported, webhookDenied } from './errors.js'
import { admissionRequest, type Invocation, invocationFor, VersionedObjects, type WebhookDeps } from './invocation.js'
import { admissionReview, type AdmissionRequest, negotiateReviewVersion } from './review.js'
import { isExemptFromWebhooks } from './rules.js'
import { recordAnswer, sideEffectsAllowDryRun } from './shared.js'
import type { AdmissionAttributes } from '../attributes.js'

/** Asks the webhook; answers its refusal, or undefined when it allowed the request. Throws when the call failed. */
async function askValidating(a: AdmissionAttributes, hook: Invocation['hook'], request: AdmissionRequest, deps: WebhookDeps): Promise<StatusError | undefined> {
  if (a.dryRun && !sideEffectsAllowDryRun(hook.sideEffects)) throw dryRunUnsupported(hook.name)
  const version = negotiateReviewVersion(hook.admissionReviewVersions)
  if (!version) throw new CallingWebhookError(hook.name, 'could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)', 400)
  const answer = await callWebhook(hook, admissionReview(version, request), version, request.uid, deps)
  recordAnswer(a, hook.name, answer)
  return answer.allowed ? undefined : webhookDenied(hook.name, answer.result)
}

/** One call, counted and timed; answers the error that refuses the request, or undefined. */
async function callValidating(a: AdmissionAttributes, invocation: Invocation, request: AdmissionRequest, deps: WebhookDeps): Promise<StatusError | undefined> {
  const { hook } = invocation
  const started = performance.now()
  try {
    const denied = await askValidating(a, hook, request, deps)
    observeWebhookCall(deps.metrics, hook, 'validating', a.operation, started, denied ? { denied } : { allowed: true })
    return denied
  } catch (err) {
    observeWebhookCall(deps.metrics, hook, 'validating', a.operation, started, { failed: err })
    // A dry run the webhook cannot take is refused as it is (400), whatever the failure policy.
    if (err instanceof StatusError) return err
    if (!(err instanceof CallingWebhookError)) return internalError(err)
    if (hook.failurePolicy === 'Ignore') {
      deps.logger.warn({ webhook: hook.name, err: err.message }, 'Failed calling webhook, failing open')
      return undefined
    }
    deps.logger.warn({ webhook: hook.name, err: err.message }, 'Failed calling webhook, failing closed')
    return internalError(err)
  }
}

export function validatingWebhookAdmission(deps: WebhookDeps): ValidatingAdmission {
  return {
    name: 'ValidatingAdmissionWebhook',
    handles: () => true,
    async validate(a) {
      if (isExemptFromWebhooks(a.entry.group, a.entry.resource)) return
      const hooks = deps.index.webhooks()
      if (!hooks.length) return
      const objects = new VersionedObjects(a)
      // Matching decides in order and may refuse; the requests are built before any call starts.
      const calls: { invocation: Invocation; request: AdmissionRequest }[] = []
      for (const hook of hooks) {
        const invocation = await invocationFor(hook, a, objects, deps)
        if (invocation) calls.push({ invocation, request: await admissionRequest(a, invocation, objects, crypto.randomUUID()) })
      }
      const refusals = await Promise.all(calls.map(({ invocation, request }) => callValidating(a, invocation, request, deps)))
      const refusal = refusals.find((r) => r !== undefined)
      if (refusal) throw refusal
    },
  }
}
