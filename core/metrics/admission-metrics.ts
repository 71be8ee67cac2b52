/**
 * Admission timed as upstream's admission metrics do:
 * `apiserver_admission_step_admission_duration_seconds` for each phase
 * (type `admit` for mutating, `validate` for validating) and
 * `apiserver_admission_controller_admission_duration_seconds` for each
 * plugin, by operation and whether it refused the request.
 */
import type { AdmissionAttributes } from '../admission/attributes.js'
import type { AdmissionChain, AdmissionPlugin } from '../admission/chain.js'
import type { MutatingAdmission } from '../admission/mutating.js'
import type { ValidatingAdmission } from '../admission/validating.js'
import { ADMISSION_CONTROLLER_DURATION, ADMISSION_STEP_DURATION, type MetricDefinition } from './definitions.js'
import type { Metrics } from './metrics.js'

async function timed(metrics: Metrics, metric: MetricDefinition, labels: Record<string, string>, work: () => void | Promise<void>): Promise<void> {
  const started = performance.now()
  let rejected = true
  try {
    await work()
    rejected = false
  } finally {
    metrics.record(metric, { ...labels, rejected: String(rejected) }, (performance.now() - started) / 1000)
  }
}

/** The plugin with each call timed under its name; both halves of a plugin that mutates and validates. */
export function measuredPlugin(plugin: AdmissionPlugin, metrics: Metrics): AdmissionPlugin {
  const labels = (a: AdmissionAttributes, type: string) => ({ name: plugin.name, operation: a.operation, type })
  const measured: Partial<MutatingAdmission & ValidatingAdmission> = { name: plugin.name, handles: (operation) => plugin.handles(operation) }
  if ('admit' in plugin) measured.admit = (a) => timed(metrics, ADMISSION_CONTROLLER_DURATION, labels(a, 'admit'), () => plugin.admit(a))
  if ('validate' in plugin) measured.validate = (a) => timed(metrics, ADMISSION_CONTROLLER_DURATION, labels(a, 'validate'), () => plugin.validate(a))
  return measured as AdmissionPlugin
}

/** The chain with each of its two phases timed as a step. */
export function measuredChain(chain: AdmissionChain, metrics: Metrics): AdmissionChain {
  return {
    mutating: {
      name: chain.mutating.name,
      handles: (operation) => chain.mutating.handles(operation),
      admit: (a) => timed(metrics, ADMISSION_STEP_DURATION, { operation: a.operation, type: 'admit' }, () => chain.mutating.admit(a)),
    },
    validating: {
      name: chain.validating.name,
      handles: (operation) => chain.validating.handles(operation),
      validate: (a) => timed(metrics, ADMISSION_STEP_DURATION, { operation: a.operation, type: 'validate' }, () => chain.validating.validate(a)),
    },
  }
}
