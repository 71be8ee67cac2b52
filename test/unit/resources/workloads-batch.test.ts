import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { applyCronJobDefaultsInSteps, validateCronJobInSteps, validateCronJobUpdateInSteps } from '../../../core/resources/batch/cronjob.js'
import { applyJobDefaultsInSteps, generateSelector, validateJobInSteps, validateJobUpdateInSteps } from '../../../core/resources/batch/job.js'
import type { PodSpecValidationOptions } from '../../../core/resources/core/pod-spec-validation.js'
import type { KubeObject } from '../../../core/machinery/object.js'
import { errorText } from '../../../core/machinery/field.js'
import { runAtOnce } from '../../../core/machinery/time-slice.js'

// The kinds' passes at once, as the registry runs them for an object of ordinary size.
const applyCronJobDefaults = (cj: KubeObject) => runAtOnce(applyCronJobDefaultsInSteps(cj))
const validateCronJob = (cj: KubeObject, opts: PodSpecValidationOptions) => runAtOnce(validateCronJobInSteps(cj, opts))
const validateCronJobUpdate = (cj: KubeObject, old: KubeObject, opts: PodSpecValidationOptions) => runAtOnce(validateCronJobUpdateInSteps(cj, old, opts))
const applyJobDefaults = (job: KubeObject) => runAtOnce(applyJobDefaultsInSteps(job))
const validateJob = (job: KubeObject, opts: PodSpecValidationOptions) => runAtOnce(validateJobInSteps(job, opts))
const validateJobUpdate = (job: KubeObject, old: KubeObject, opts: PodSpecValidationOptions) => runAtOnce(validateJobUpdateInSteps(job, old, opts))

type Spec = Record<string, unknown>

const podSpec = { containers: [{ name: 'app', image: 'perl:5' }], restartPolicy: 'Never' }

/** A job as the server holds it after create: defaulted, with its generated selector. */
function created(spec: Spec = {}, name = 'pi'): KubeObject {
  const job: KubeObject = { metadata: { name, uid: 'uid-1' }, spec: { template: { spec: structuredClone(podSpec) }, ...spec } }
  applyJobDefaults(job)
  generateSelector(job)
  return job
}

const texts = (errs: { field: string }[]) => errs.map((e) => errorText(e as never))
const spec = (obj: KubeObject) => obj['spec'] as Spec

describe('Job defaults', () => {
  it('defaults completions with parallelism only when both are unset', () => {
    assert.deepEqual([spec(created()).completions, spec(created()).parallelism], [1, 1])
    assert.deepEqual([spec(created({ parallelism: 4 })).completions, spec(created({ parallelism: 4 })).parallelism], [undefined, 4])
    assert.deepEqual([spec(created({ completions: 4 })).completions, spec(created({ completions: 4 })).parallelism], [4, 1])
  })

  it('lifts the backoff limit when a limit per index is set, and prefers Failed replacement with a failure policy', () => {
    const job = created({ completionMode: 'Indexed', completions: 3, backoffLimitPerIndex: 1, podFailurePolicy: { rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] }] } })
    assert.equal(spec(job).backoffLimit, 2147483647)
    assert.equal(spec(job).podReplacementPolicy, 'Failed')
    assert.deepEqual(spec(job).podFailurePolicy, { rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] }] })
  })

  it('keeps labels the client set on the pods and adds the generated ones beside them', () => {
    const job: KubeObject = { metadata: { name: 'pi', uid: 'u' }, spec: { template: { metadata: { labels: { team: 'a' } }, spec: structuredClone(podSpec) } } }
    applyJobDefaults(job)
    generateSelector(job)
    assert.deepEqual(job.metadata.labels, { team: 'a' })
    assert.deepEqual((spec(job).template as Spec)['metadata'], {
      labels: { team: 'a', 'job-name': 'pi', 'batch.kubernetes.io/job-name': 'pi', 'controller-uid': 'u', 'batch.kubernetes.io/controller-uid': 'u' },
    })
  })
})

describe('Job validation', () => {
  it('accepts a generated job', () => {
    assert.deepEqual(validateJob(created(), {}), [])
  })

  it('refuses a selector that is not the generated one', () => {
    const job = created()
    spec(job).selector = { matchLabels: { 'batch.kubernetes.io/controller-uid': 'someone-else' } }
    assert.deepEqual(texts(validateJob(job, {})), [
      'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"batch.kubernetes.io/controller-uid":"someone-else"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: `selector` not auto-generated',
      'spec.template.metadata.labels: Invalid value: map[string]string{"batch.kubernetes.io/controller-uid":"uid-1", "batch.kubernetes.io/job-name":"pi", "controller-uid":"uid-1", "job-name":"pi"}: `selector` does not match template `labels`',
    ])
  })

  it('applies the Indexed mode’s rules', () => {
    const job = created({ completionMode: 'Indexed', parallelism: 200000, maxFailedIndexes: 3 }, 'a'.repeat(62))
    delete spec(job).completions
    assert.deepEqual(texts(validateJob(job, {})), [
      'spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified',
      'spec.completions: Required value: when completion mode is Indexed',
      'spec.parallelism: Invalid value: 200000: must be less than or equal to 100000 when completion mode is Indexed',
    ])
    const named = created({ completionMode: 'Indexed', completions: 10 }, 'b'.repeat(62))
    assert.deepEqual(texts(validateJob(named, {})), [
      `metadata.name: Invalid value: "${'b'.repeat(62)}": will not able to create pod with invalid DNS label: ${'b'.repeat(62)}-9`,
    ])
  })

  it('refuses OnFailure with a pod failure policy, and an unknown replacement policy', () => {
    const job = created({ podFailurePolicy: { rules: [] }, podReplacementPolicy: 'TerminatingOrFailed' })
    ;(spec(job).template as { spec: Spec }).spec.restartPolicy = 'OnFailure'
    assert.deepEqual(texts(validateJob(job, {})), [
      'spec.podReplacementPolicy: Unsupported value: "TerminatingOrFailed": supported values: "Failed"',
      'spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy is specified',
    ])
  })

  it('refuses a managedBy that is not a domain-prefixed path', () => {
    assert.deepEqual(texts(validateJob(created({ managedBy: 'controller' }), {})), [
      'spec.managedBy: Invalid value: "controller": must be a domain-prefixed path (such as "acme.io/foo")',
    ])
  })
})

describe('Job updates', () => {
  it('lets an Indexed job change completions together with parallelism only', () => {
    const old = created({ completionMode: 'Indexed', completions: 3, parallelism: 3 })
    const both = structuredClone(old)
    Object.assign(spec(both), { completions: 5, parallelism: 5 })
    assert.deepEqual(validateJobUpdate(both, old, {}), [])
    const alone = structuredClone(old)
    spec(alone).completions = 5
    assert.deepEqual(texts(validateJobUpdate(alone, old, {})), ['spec.completions: Invalid value: 5: can only be modified in tandem with spec.parallelism'])
  })

  it('keeps the template fixed for a running job, scheduling directives included', () => {
    const old = created()
    const next = structuredClone(old)
    ;(spec(next).template as { spec: Spec }).spec.nodeSelector = { zone: 'b' }
    const errs = texts(validateJobUpdate(next, old, {}))
    assert.equal(errs.length, 1)
    assert.match(errs[0] ?? '', /^spec\.template: Invalid value: .*: field is immutable$/)
  })

  it('does not ask jobs created before the prefixed labels for them', () => {
    const old = created()
    const labels = ((spec(old).template as Spec)['metadata'] as { labels: Record<string, string> }).labels
    delete labels['batch.kubernetes.io/job-name']
    spec(old).selector = { matchLabels: { 'controller-uid': 'uid-1' } }
    assert.deepEqual(validateJobUpdate(structuredClone(old), old, {}), [])
    assert.equal(texts(validateJob(structuredClone(old), {}))[0], 'spec.template.metadata.labels[batch.kubernetes.io/job-name]: Required value: pi')
  })
})

describe('CronJob rules', () => {
  const cronJob = (s: Spec = {}): KubeObject => {
    const cj: KubeObject = { metadata: { name: 'tick' }, spec: { schedule: '0 * * * *', jobTemplate: { spec: { template: { spec: structuredClone(podSpec) } } }, ...s } }
    applyCronJobDefaults(cj)
    return cj
  }

  it('accepts a plain cronjob and a known time zone', () => {
    assert.deepEqual(validateCronJob(cronJob({ timeZone: 'Asia/Tokyo' }), {}), [])
  })

  it('refuses an empty or Local time zone and a manual selector in the job template', () => {
    assert.deepEqual(texts(validateCronJob(cronJob({ timeZone: '' }), {})), ['spec.timeZone: Invalid value: "": timeZone must be nil or non-empty string'])
    assert.deepEqual(texts(validateCronJob(cronJob({ timeZone: 'Local' }), {})), [
      'spec.timeZone: Invalid value: "Local": timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones',
    ])
    const manual = cronJob()
    ;((spec(manual).jobTemplate as Spec)['spec'] as Spec)['manualSelector'] = true
    assert.deepEqual(texts(validateCronJob(manual, {})), ['spec.jobTemplate.spec.manualSelector: Unsupported value: true: supported values: "nil", "false"'])
  })

  it('keeps a TZ schedule stored before the timeZone field editable, but not beside a timeZone', () => {
    const old = cronJob({ schedule: 'TZ=UTC 0 * * * *' })
    const next = structuredClone(old)
    spec(next).suspend = true
    assert.deepEqual(validateCronJobUpdate(next, old, {}), [])
    spec(next).timeZone = 'UTC'
    assert.deepEqual(texts(validateCronJobUpdate(next, old, {})), ['spec.schedule: Invalid value: "TZ=UTC 0 * * * *": cannot use both timeZone field and TZ or CRON_TZ in schedule'])
  })

  it('lets a long-named cronjob be updated', () => {
    const old = cronJob()
    old.metadata.name = 'n'.repeat(60)
    assert.equal(validateCronJob(old, {}).length, 1)
    assert.deepEqual(validateCronJobUpdate(structuredClone(old), old, {}), [])
  })
})
