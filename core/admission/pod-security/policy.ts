/**
 * Pod Security levels and versions (upstream's pod-security-admission api
 * and policy registry): a namespace's `pod-security.kubernetes.io/<mode>`
 * and `<mode>-version` labels, and the evaluation of a pod against a
 * level at a version, baseline checks first, then restricted ones, each
 * group in the order of its ids.
 */
import type { FieldError } from '../../machinery/field.js'
import { FieldPath, invalid } from '../../machinery/field.js'
import type { CheckResult, PodParts } from './check-helpers.js'
import { CHECKS } from './checks.js'

export type Level = 'privileged' | 'baseline' | 'restricted'
export const LEVELS: readonly Level[] = ['privileged', 'baseline', 'restricted']
export type Mode = 'enforce' | 'audit' | 'warn'
export const MODES: readonly Mode[] = ['enforce', 'audit', 'warn']

/** The minor version of the server (v1.32): what `latest` means for the versioned checks. */
export const LATEST_MINOR = 32

/** A level at a version: minor 0 up to the latest; `latest` reads as the latest. */
export interface LevelVersion {
  level: Level
  /** `latest`, or `v1.N`. */
  version: string
}

export type NamespacePolicy = Record<Mode, LevelVersion>

export const LABEL_PREFIX = 'pod-security.kubernetes.io/'

export const policyText = (p: LevelVersion): string => `${p.level}:${p.version}`

/** The minor version a version label names, or undefined when it is not `latest` or `v1.N`. */
export function minorOf(version: string): number | undefined {
  if (version === 'latest') return LATEST_MINOR
  const m = /^v1\.(0|[1-9]\d*)$/.exec(version)
  return m ? Math.min(Number(m[1]), LATEST_MINOR) : undefined
}

export const isLevel = (v: unknown): v is Level => typeof v === 'string' && (LEVELS as readonly string[]).includes(v)

/**
 * The policy a namespace's labels set, over the defaults; an invalid label
 * makes its mode the strictest (restricted:latest), as upstream fails closed,
 * and is reported as a field error.
 */
export function policyFromLabels(labels: Record<string, string> | undefined, defaults: NamespacePolicy): { policy: NamespacePolicy; errors: FieldError[] } {
  const errors: FieldError[] = []
  const policy = { ...defaults }
  const path = FieldPath.root('metadata').child('labels')
  for (const mode of MODES) {
    const levelKey = `${LABEL_PREFIX}${mode}`
    const versionKey = `${levelKey}-version`
    const level = labels?.[levelKey]
    const version = labels?.[versionKey]
    let bad = false
    if (level !== undefined && !isLevel(level)) {
      errors.push(invalid(path.key(levelKey), level, `must be one of ${LEVELS.join(', ')}`))
      bad = true
    }
    if (version !== undefined && minorOf(version) === undefined) {
      errors.push(invalid(path.key(versionKey), version, 'must be "latest" or "v1.x"'))
      bad = true
    }
    policy[mode] = bad
      ? { level: 'restricted', version: 'latest' }
      : { level: (level as Level | undefined) ?? defaults[mode].level, version: version ?? defaults[mode].version }
  }
  return { policy, errors }
}

export interface Evaluation {
  allowed: boolean
  reasons: string[]
  /** `reason (detail)` joined with ", ": the text after `violates PodSecurity "...": `. */
  detail: string
}

/** The checks of a level at a version: restricted includes baseline, less the baseline checks it overrides. */
function checksFor({ level, version }: LevelVersion): typeof CHECKS {
  if (level === 'privileged') return []
  const minor = minorOf(version) ?? LATEST_MINOR
  const effective = CHECKS.filter((c) => c.since <= minor && (c.level === 'baseline' || level === 'restricted'))
  const overridden = new Set(effective.flatMap((c) => c.overrides ?? []))
  return effective.filter((c) => !overridden.has(c.id))
}

const BY_ID = (a: { id: string }, b: { id: string }): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

export function evaluatePod(policy: LevelVersion, pod: PodParts): Evaluation {
  const minor = minorOf(policy.version) ?? LATEST_MINOR
  const checks = checksFor(policy)
  const ordered = [...checks.filter((c) => c.level === 'baseline').sort(BY_ID), ...checks.filter((c) => c.level === 'restricted').sort(BY_ID)]
  const failed = ordered.map((c) => c.run(pod, minor)).filter((r): r is Extract<CheckResult, { allowed: false }> => !r.allowed)
  return {
    allowed: failed.length === 0,
    reasons: failed.map((r) => r.reason),
    detail: failed.map((r) => (r.detail ? `${r.reason} (${r.detail})` : r.reason)).join(', '),
  }
}
