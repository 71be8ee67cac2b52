/**
 * What a Job's spec must satisfy, whether a Job's own or a CronJob's job
 * template (upstream's validateJobSpec): the counters, the completion mode and
 * its limits, the pod replacement policy, and a template whose pods end.
 */
import { type FieldError, type FieldPath, invalid, isSet, notSupported, required, tooLong } from '../../machinery/field.js'
import { isDNS1123Subdomain } from '../../machinery/names.js'
import { nonNegative } from '../apps/selector.js'
import { podSpecOf } from '../apps/template.js'
import { type PodSpecValidationOptions, validatePodTemplateSpecInSteps } from '../core/pod-spec-validation.js'
import type { Checkpointed } from '../../machinery/time-slice.js'
import { isPlainObject } from '../../machinery/object.js'
import { appendAll, appendAllInSteps } from '../../machinery/append-all.js'

type Obj = Record<string, unknown>

const MAX_PARALLELISM_INDEXED = 100_000
const MAX_FAILED_INDEXES = 100_000
const COMPLETIONS_SOFT_LIMIT = 100_000
const PARALLELISM_LIMIT_HIGH_COMPLETIONS = 10_000
const MAX_FAILED_INDEXES_HIGH_COMPLETIONS = 10_000
const MAX_MANAGED_BY_LENGTH = 63
const HTTP_PATH_FMT = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+"
const HTTP_PATH_RE = new RegExp(`^${HTTP_PATH_FMT}$`)

const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined)

/** upstream's IsDomainPrefixedPath, for spec.managedBy (`example.com/controller`). */
function validateDomainPrefixedPath(value: unknown, path: FieldPath): FieldError[] {
  const text = typeof value === 'string' ? value : ''
  if (!text) return [required(path)]
  const slash = text.indexOf('/')
  const host = slash < 0 ? '' : text.slice(0, slash)
  const rest = slash < 0 ? '' : text.slice(slash + 1)
  if (!host || !rest) return [invalid(path, text, 'must be a domain-prefixed path (such as "acme.io/foo")')]
  const errs = isDNS1123Subdomain(host).map((msg) => invalid(path, host, msg))
  if (!HTTP_PATH_RE.test(rest)) errs.push(invalid(path, rest, `must be a valid path (regex used for validation is '${HTTP_PATH_FMT}')`))
  return errs
}

function validateIndexedLimits(spec: Obj, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  const completions = num(spec['completions'])
  const parallelism = num(spec['parallelism'])
  const maxFailed = num(spec['maxFailedIndexes'])
  if (completions === undefined) errs.push(required(path.child('completions'), 'when completion mode is Indexed'))
  if (parallelism !== undefined && parallelism > MAX_PARALLELISM_INDEXED)
    errs.push(invalid(path.child('parallelism'), parallelism, `must be less than or equal to ${MAX_PARALLELISM_INDEXED} when completion mode is Indexed`))
  if (completions !== undefined && maxFailed !== undefined && maxFailed > completions)
    errs.push(invalid(path.child('maxFailedIndexes'), maxFailed, 'must be less than or equal to completions'))
  if (maxFailed !== undefined && maxFailed > MAX_FAILED_INDEXES)
    errs.push(invalid(path.child('maxFailedIndexes'), maxFailed, `must be less than or equal to ${MAX_FAILED_INDEXES}`))
  if (completions !== undefined && completions > COMPLETIONS_SOFT_LIMIT && isSet(spec['backoffLimitPerIndex'])) {
    const suffix = `when completions are above ${COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index`
    if (maxFailed === undefined) errs.push(required(path.child('maxFailedIndexes'), `must be specified when completions is above ${COMPLETIONS_SOFT_LIMIT}`))
    if (parallelism !== undefined && parallelism > PARALLELISM_LIMIT_HIGH_COMPLETIONS)
      errs.push(invalid(path.child('parallelism'), parallelism, `must be less than or equal to ${PARALLELISM_LIMIT_HIGH_COMPLETIONS} ${suffix}`))
    if (maxFailed !== undefined && maxFailed > MAX_FAILED_INDEXES_HIGH_COMPLETIONS)
      errs.push(invalid(path.child('maxFailedIndexes'), maxFailed, `must be less than or equal to ${MAX_FAILED_INDEXES_HIGH_COMPLETIONS} ${suffix}`))
  }
  return errs
}

function validateCompletionMode(spec: Obj, path: FieldPath): FieldError[] {
  const mode = spec['completionMode']
  const errs: FieldError[] = []
  if (isSet(mode) && mode !== 'NonIndexed' && mode !== 'Indexed') errs.push(notSupported(path.child('completionMode'), mode, ['NonIndexed', 'Indexed']))
  if (mode === 'Indexed') appendAll(errs, validateIndexedLimits(spec, path))
  if (!isSet(mode) || mode === 'NonIndexed') {
    for (const key of ['backoffLimitPerIndex', 'maxFailedIndexes'])
      if (isSet(spec[key])) errs.push(invalid(path.child(key), spec[key], 'requires indexed completion mode'))
  }
  return errs
}

function validatePodReplacementPolicy(spec: Obj, path: FieldPath): FieldError[] {
  const policy = spec['podReplacementPolicy']
  if (!isSet(policy)) return []
  // With a pod failure policy, a pod is replaced only once it has failed.
  const allowed = isSet(spec['podFailurePolicy']) ? ['Failed'] : ['Failed', 'TerminatingOrFailed']
  return allowed.includes(String(policy)) ? [] : [notSupported(path, policy, allowed)]
}

function validateRestartPolicy(spec: Obj, path: FieldPath): FieldError[] {
  const at = path.child('template').child('spec').child('restartPolicy')
  const policy = podSpecOf(spec['template'])['restartPolicy'] ?? ''
  // A template without a restart policy was defaulted to Always, which a Job cannot use.
  if (policy === 'Always' || policy === '') return [required(at, 'valid values: "OnFailure", "Never"')]
  if (policy !== 'OnFailure' && policy !== 'Never') return [notSupported(at, policy, ['OnFailure', 'Never'])]
  if (isSet(spec['podFailurePolicy']) && policy !== 'Never') return [invalid(at, policy, 'only "Never" is supported when podFailurePolicy is specified')]
  return []
}

/** upstream's validateJobSpec: everything but the selector, in checkpointed steps. */
export function* validateJobSpecFieldsInSteps(value: unknown, path: FieldPath, opts: PodSpecValidationOptions): Checkpointed<FieldError[]> {
  const spec = isPlainObject(value) ? value : {}
  const errs: FieldError[] = []
  for (const key of ['parallelism', 'completions', 'activeDeadlineSeconds', 'backoffLimit', 'ttlSecondsAfterFinished', 'backoffLimitPerIndex', 'maxFailedIndexes'])
    appendAll(errs, nonNegative(spec[key], path.child(key)))
  if (isSet(spec['maxFailedIndexes']) && !isSet(spec['backoffLimitPerIndex']))
    errs.push(required(path.child('backoffLimitPerIndex'), 'when maxFailedIndexes is specified'))
  if (isSet(spec['managedBy'])) {
    appendAll(errs, validateDomainPrefixedPath(spec['managedBy'], path.child('managedBy')))
    if (String(spec['managedBy']).length > MAX_MANAGED_BY_LENGTH) errs.push(tooLong(path.child('managedBy'), MAX_MANAGED_BY_LENGTH))
  }
  appendAll(errs, validateCompletionMode(spec, path))
  appendAll(errs, validatePodReplacementPolicy(spec, path.child('podReplacementPolicy')))
  yield* appendAllInSteps(errs, yield* validatePodTemplateSpecInSteps(spec['template'], path.child('template'), opts))
  appendAll(errs, validateRestartPolicy(spec, path))
  return errs
}
