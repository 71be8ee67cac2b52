/**
 * The rules of a LeaseCandidate's spec (upstream's ValidateLeaseCandidateSpec,
 * in substance): the lease it runs for, its binary version and a strategy
 * are required; versions are semantic versions, the emulated one no newer
 * than the binary; the OldestEmulationVersion strategy needs the emulated
 * version, which it compares.
 */
import { type FieldError, fieldPath, invalid, notSupported, required } from '../../machinery/field.js'
import { isQualifiedName } from '../../machinery/names.js'
import { record, text } from '../columns/values.js'
import type { KubeObject } from '../../machinery/object.js'
import { appendAll } from '../../machinery/append-all.js'

export const OLDEST_EMULATION_VERSION = 'OldestEmulationVersion'

/** `major.minor.patch` (a leading v, pre-release and build allowed) as numbers; undefined when not one. */
export function parseSemver(version: string): [number, number, number] | undefined {
  const m = /^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/.exec(version)
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined
}

export function compareSemver(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) - (b[i] ?? 0)
  return 0
}

export function validateLeaseCandidate(candidate: KubeObject): FieldError[] {
  const errs: FieldError[] = []
  const spec = record(candidate['spec'])
  const path = fieldPath('spec')
  if (!text(spec['leaseName'])) errs.push(required(path.child('leaseName'), ''))
  const binary = text(spec['binaryVersion'])
  const parsedBinary = binary ? parseSemver(binary) : undefined
  if (!binary) errs.push(required(path.child('binaryVersion'), ''))
  else if (!parsedBinary) errs.push(invalid(path.child('binaryVersion'), binary, 'must be a semantic version'))
  const emulation = text(spec['emulationVersion'])
  const parsedEmulation = emulation ? parseSemver(emulation) : undefined
  if (emulation && !parsedEmulation) errs.push(invalid(path.child('emulationVersion'), emulation, 'must be a semantic version'))
  if (parsedBinary && parsedEmulation && compareSemver(parsedEmulation, parsedBinary) > 0)
    errs.push(invalid(path.child('emulationVersion'), emulation, 'must be less than or equal to binaryVersion'))
  const strategy = text(spec['strategy'])
  if (!strategy) errs.push(required(path.child('strategy'), ''))
  else if (!strategy.includes('/') && strategy !== OLDEST_EMULATION_VERSION)
    errs.push(notSupported(path.child('strategy'), strategy, [OLDEST_EMULATION_VERSION]))
  else if (strategy.includes('/')) appendAll(errs, isQualifiedName(strategy).map((msg) => invalid(path.child('strategy'), strategy, msg)))
  if (strategy === OLDEST_EMULATION_VERSION && !emulation)
    errs.push(required(path.child('emulationVersion'), `must be specified when strategy is ${OLDEST_EMULATION_VERSION}`))
  return errs
}
