/**
 * Mutating and validating webhook configurations (upstream's
 * admissionregistration/v1 defaults and ValidateXWebhookConfiguration):
 * fully qualified unique names, rules, client config, side effects,
 * admission review versions, timeouts and match conditions.
 */
import { list, record, text } from '../columns/values.js'
import type { KubeObject } from '../../machinery/object.js'
import { duplicate, type FieldError, type FieldPath, fieldPath, invalid, isSet, notSupported, required } from '../../machinery/field.js'
import { goStrings } from '../../machinery/go-format.js'
import { validateLabelSelector } from '../../validation/label-selector.js'
import { validateFinalizerNames } from '../../validation/object-meta.js'
import { isDNS1123Subdomain } from '../../machinery/names.js'
import { defaultServicePort, validateClientConfig, validateReviewVersionItems } from './client-config.js'
import { validateMatchConditions } from './match-conditions.js'
import { defaultRuleScope, FAILURE_POLICIES, MATCH_POLICIES, validateRuleWithOperations } from './rules.js'
import { appendAll } from '../../machinery/append-all.js'
import { type Checkpointed, checkpointDue } from '../../machinery/time-slice.js'

const REINVOCATION_POLICIES = ['IfNeeded', 'Never']
const NO_SIDE_EFFECTS = ['None', 'NoneOnDryRun']
const ANY_SIDE_EFFECTS = ['None', 'NoneOnDryRun', 'Some', 'Unknown']
const REVIEW_VERSIONS = ['v1', 'v1beta1']

export type WebhookKind = 'mutating' | 'validating'

const hooks = (obj: KubeObject): Record<string, unknown>[] => list(obj['webhooks']).map(record)

/** A configuration's defaults, in checkpointed steps: a body of 3 MB holds a million webhooks. */
export function* applyWebhookDefaultsInSteps(obj: KubeObject, kind: WebhookKind): Checkpointed<void> {
  for (const hook of list(obj['webhooks'])) {
    if (checkpointDue()) yield
    if (hook === null || typeof hook !== 'object') continue
    const h = hook as Record<string, unknown>
    h['failurePolicy'] ??= 'Fail'
    h['matchPolicy'] ??= 'Equivalent'
    h['namespaceSelector'] ??= {}
    h['objectSelector'] ??= {}
    h['timeoutSeconds'] ??= 10
    if (kind === 'mutating') h['reinvocationPolicy'] ??= 'Never'
    for (const rule of list(h['rules'])) defaultRuleScope(rule)
    defaultServicePort(h['clientConfig'])
  }
}

/**
 * What an update may keep from the stored object although a create would
 * refuse it: upstream relaxes each rule when the old object already broke it.
 */
export interface WebhookOptions {
  requireNoSideEffects: boolean
  requireRecognizedReviewVersion: boolean
  requireUniqueNames: boolean
  /** Match conditions unchanged since the stored object: not compiled again. */
  ignoreMatchConditions: boolean
}

const CREATE_OPTIONS: WebhookOptions = {
  requireNoSideEffects: true,
  requireRecognizedReviewVersion: true,
  requireUniqueNames: true,
  ignoreMatchConditions: false,
}

/** upstream's IsFullyQualifiedName: a DNS subdomain of at least three labels. */
function fullyQualifiedNameErrors(name: string, path: FieldPath): FieldError[] {
  if (!name) return [required(path)]
  const errs = isDNS1123Subdomain(name)
  if (errs.length) return [invalid(path, name, errs.join(','))]
  if (name.split('.').length < 3) return [invalid(path, name, 'should be a domain with at least three segments separated by dots')]
  return []
}

function validateReviewVersions(versions: string[], requireRecognized: boolean, path: FieldPath): FieldError[] {
  if (versions.length === 0) return [required(path, `must specify one of ${REVIEW_VERSIONS.join(', ')}`)]
  const errs = validateReviewVersionItems(versions, path)
  if (requireRecognized && !versions.some((v) => REVIEW_VERSIONS.includes(v)))
    errs.push(invalid(path, goStrings(versions), `must include at least one of ${REVIEW_VERSIONS.join(', ')}`))
  return errs
}

function validateWebhook(hook: Record<string, unknown>, kind: WebhookKind, opts: WebhookOptions, path: FieldPath): FieldError[] {
  const errs = fullyQualifiedNameErrors(text(hook['name']), path.child('name'))
  list(hook['rules']).forEach((rule, i) => appendAll(errs, validateRuleWithOperations(rule, path.child('rules').index(i))))
  const failurePolicy = hook['failurePolicy']
  if (isSet(failurePolicy) && !FAILURE_POLICIES.includes(text(failurePolicy)))
    errs.push(notSupported(path.child('failurePolicy'), failurePolicy, FAILURE_POLICIES))
  const matchPolicy = hook['matchPolicy']
  if (isSet(matchPolicy) && !MATCH_POLICIES.includes(text(matchPolicy))) errs.push(notSupported(path.child('matchPolicy'), matchPolicy, MATCH_POLICIES))
  const sideEffects = hook['sideEffects']
  const allowedSideEffects = opts.requireNoSideEffects ? NO_SIDE_EFFECTS : ANY_SIDE_EFFECTS
  if (!isSet(sideEffects)) errs.push(required(path.child('sideEffects'), `must specify one of ${allowedSideEffects.join(', ')}`))
  else if (!allowedSideEffects.includes(text(sideEffects))) errs.push(notSupported(path.child('sideEffects'), sideEffects, allowedSideEffects))
  const timeout = hook['timeoutSeconds']
  if (typeof timeout === 'number' && (timeout > 30 || timeout < 1))
    errs.push(invalid(path.child('timeoutSeconds'), timeout, 'the timeout value must be between 1 and 30 seconds'))
  appendAll(errs, validateLabelSelector(hook['namespaceSelector'], path.child('namespaceSelector')))
  appendAll(errs, validateLabelSelector(hook['objectSelector'], path.child('objectSelector')))
  const reinvocation = hook['reinvocationPolicy']
  if (kind === 'mutating' && isSet(reinvocation) && !REINVOCATION_POLICIES.includes(text(reinvocation)))
    errs.push(notSupported(path.child('reinvocationPolicy'), reinvocation, REINVOCATION_POLICIES))
  appendAll(errs, validateClientConfig(hook['clientConfig'], path.child('clientConfig')))
  if (!opts.ignoreMatchConditions) appendAll(errs, validateMatchConditions(hook['matchConditions'], { params: false }, path.child('matchConditions')))
  return errs
}

/** A configuration's webhooks, in checkpointed steps: a body of 3 MB holds a million of them. */
export function* validateWebhookConfigurationInSteps(obj: KubeObject, kind: WebhookKind, opts: WebhookOptions = CREATE_OPTIONS): Checkpointed<FieldError[]> {
  const errs: FieldError[] = []
  const names = new Set<string>()
  const all = hooks(obj)
  for (let i = 0; i < all.length; i++) {
    if (checkpointDue()) yield
    const hook = all[i] as Record<string, unknown>
    const path = fieldPath('webhooks').index(i)
    appendAll(errs, validateWebhook(hook, kind, opts, path))
    const versions = list(hook['admissionReviewVersions']).map(text)
    appendAll(errs, validateReviewVersions(versions, opts.requireRecognizedReviewVersion, path.child('admissionReviewVersions')))
    const name = text(hook['name'])
    if (opts.requireUniqueNames && name) {
      if (names.has(name)) errs.push(duplicate(path.child('name'), name))
      names.add(name)
    }
  }
  return errs
}

function sameMatchConditions(next: KubeObject, old: KubeObject): boolean {
  const a = hooks(next)
  const b = hooks(old)
  return a.length === b.length && a.every((hook, i) => JSON.stringify(hook['matchConditions'] ?? null) === JSON.stringify(b[i]?.['matchConditions'] ?? null))
}

export function* validateWebhookConfigurationUpdateInSteps(obj: KubeObject, old: KubeObject, kind: WebhookKind): Checkpointed<FieldError[]> {
  const stored = hooks(old)
  const storedNames = stored.map((h) => text(h['name']))
  // Upstream validates an update's metadata as a new object's: its finalizers' names too.
  const errs = validateFinalizerNames(obj.metadata.finalizers, fieldPath('metadata').child('finalizers'))
  return errs.concat(yield* validateWebhookConfigurationInSteps(obj, kind, {
    requireNoSideEffects: stored.every((h) => NO_SIDE_EFFECTS.includes(text(h['sideEffects']))),
    requireRecognizedReviewVersion: stored.every((h) => {
      const versions = list(h['admissionReviewVersions']).map(text)
      return versions.length === 0 || versions.some((v) => REVIEW_VERSIONS.includes(v))
    }),
    requireUniqueNames: new Set(storedNames).size === storedNames.length,
    ignoreMatchConditions: sameMatchConditions(obj, old),
  }))
}

