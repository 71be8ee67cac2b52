/**
 * Admission timed as upstream's admission metrics do:
 * `apiserver_admission_step_admission_duration_seconds` for each phase
 * (type `admit` for mutating, `validate` for validating) and
 * `apiserver_admission_controller_admission_duration_seconds` for each
 * plugin, by operation and whether it refused the request.
 */
import type { AdmissionChain, AdmissionPlugin } from './chain.js'
import type { MutatingAdmission } from './mutating.js'
import type { ValidatingAdmission } from './validating.js'
import { ADMISSION_CONTROLLER_DURATION, ADMISSION_STEP_DURATION, type MetricDefinition } from '../metrics/definitions.js'
import type { HistogramHandle, Metrics } from '../metrics/metrics.js'

type Labels = Readonly<Record<string, string>>

/**
 * Times one admission call and records it under `labels` plus `rejected`.
 * A plugin that answers synchronously is timed without a promise of its
 * own (most built-in plugins do), so the wrapper adds no turn of the
 * microtask queue per plugin; a thrown refusal is recorded and rethrown.
 * Each histogram sample is found once, on its first observation (a sample
 * never observed stays out of the scrape), not on every call.
 */
function timer(metrics: Metrics, metric: MetricDefinition, fixed: Labels): (operation: string, work: () => void | Promise<void>) => void | Promise<void> {
  const samples = new Map<string, HistogramHandle>()
  const observe = (operation: string, rejected: boolean, started: number): void => {
    const key = rejected ? `${operation}:true` : operation
    let sample = samples.get(key)
    if (!sample) {
      sample = metrics.histogramOf(metric, { ...fixed, operation, rejected: String(rejected) })
      samples.set(key, sample)
    }
    sample.observe((performance.now() - started) / 1000)
  }
  return (operation, work) => {
    const started = performance.now()
    let pending: void | Promise<void>
    try {
      pending = work()
    } catch (err) {
      observe(operation, true, started)
      throw err
    }
    if (!pending) return observe(operation, false, started)
    return pending.then(
      () => observe(operation, false, started),
      (err: unknown) => {
        observe(operation, true, started)
        throw err
      },
    )
  }
}

/** The plugin with each call timed under its name; both halves of a plugin that mutates and validates. */
export function measuredPlugin(plugin: AdmissionPlugin, metrics: Metrics): AdmissionPlugin {
  const measured: Partial<MutatingAdmission & ValidatingAdmission> = { name: plugin.name, handles: (operation) => plugin.handles(operation) }
  if ('admit' in plugin) {
    const timed = timer(metrics, ADMISSION_CONTROLLER_DURATION, { name: plugin.name, type: 'admit' })
    measured.admit = (a) => timed(a.operation, () => plugin.admit(a))
  }
  if ('validate' in plugin) {
    const timed = timer(metrics, ADMISSION_CONTROLLER_DURATION, { name: plugin.name, type: 'validate' })
    measured.validate = (a) => timed(a.operation, () => plugin.validate(a))
  }
  return measured as AdmissionPlugin
}

/** The chain with each of its two phases timed as a step. */
export function measuredChain(chain: AdmissionChain, metrics: Metrics): AdmissionChain {
  const admitStep = timer(metrics, ADMISSION_STEP_DURATION, { type: 'admit' })
  const validateStep = timer(metrics, ADMISSION_STEP_DURATION, { type: 'validate' })
  return {
    mutating: {
      name: chain.mutating.name,
      handles: (operation) => chain.mutating.handles(operation),
      admit: (a) => admitStep(a.operation, () => chain.mutating.admit(a)),
    },
    validating: {
      name: chain.validating.name,
      handles: (operation) => chain.validating.handles(operation),
      validate: (a) => validateStep(a.operation, () => chain.validating.validate(a)),
    },
  }
}
