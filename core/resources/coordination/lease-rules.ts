/**
 * The rules of a Lease's spec (upstream's ValidateLeaseSpec): durations and
 * counters are never negative, and a preferred holder only means something
 * under a coordinated strategy.
 */
import { type FieldError, type FieldPath, fieldPath, forbiddenField, invalid, notSupported } from '../../machinery/field.js'
import { isQualifiedName } from '../../machinery/names.js'
import { record, text } from '../columns/values.js'
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import { appendAll } from '../../machinery/append-all.js'

/** The strategies Kubernetes itself defines; others must be qualified names (`example.com/mine`). */
const KNOWN_STRATEGIES = ['OldestEmulationVersion']

/**
 * Upstream reports strategy problems one level deeper than the field
 * (`spec.strategy.strategy`); kept, so that clients see the same path.
 */
function validateStrategy(strategy: string, path: FieldPath): FieldError[] {
  const at = path.child('strategy')
  if (!strategy.includes('/')) return KNOWN_STRATEGIES.includes(strategy) ? [] : [notSupported(at, strategy, KNOWN_STRATEGIES)]
  return isQualifiedName(strategy).map((msg) => invalid(at, strategy, msg))
}

export function validateLease(lease: KubeObject): FieldError[] {
  const errs: FieldError[] = []
  const spec = record(lease['spec'])
  const path = fieldPath('spec')
  const duration = spec['leaseDurationSeconds']
  if (typeof duration === 'number' && duration <= 0) errs.push(invalid(path.child('leaseDurationSeconds'), duration, 'must be greater than 0'))
  const transitions = spec['leaseTransitions']
  if (typeof transitions === 'number' && transitions < 0)
    errs.push(invalid(path.child('leaseTransitions'), transitions, 'must be greater than or equal to 0'))
  const strategy = spec['strategy']
  if (typeof strategy === 'string') appendAll(errs, validateStrategy(strategy, path.child('strategy')))
  if (text(spec['preferredHolder']) && !text(strategy))
    errs.push(forbiddenField(path.child('preferredHolder'), 'may only be specified if `strategy` is defined'))
  return errs
}

/**
 * Coordinated leader election (strategy, preferredHolder) sits behind a
 * feature gate that is off by default: off, a new lease loses both fields,
 * an update keeps them only where the stored lease already had them.
 */
export function dropCoordinatedFields(lease: KubeObject, old?: KubeObject, coordinated = false): void {
  const spec = lease['spec']
  if (coordinated) return
  if (!isPlainObject(spec)) return
  const oldSpec = record(old?.['spec'])
  if (oldSpec['strategy'] === undefined) delete spec['strategy']
  if (oldSpec['preferredHolder'] === undefined) delete spec['preferredHolder']
}
