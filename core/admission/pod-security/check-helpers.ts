/** What the Pod Security checks share: the pod's parts as plain data and upstream's way of listing offenders. */
import { isPlainObject } from '../../machinery/object.js'

export type Obj = Record<string, unknown>

export interface PodParts {
  metadata: { annotations?: Record<string, string> }
  spec: Obj
}

/** One check's verdict: allowed, or the reason and detail upstream words. */
export type CheckResult = { allowed: true } | { allowed: false; reason: string; detail: string }

export const ALLOWED: CheckResult = { allowed: true }
export const forbid = (reason: string, detail: string): CheckResult => ({ allowed: false, reason, detail })

/** A check of one level, effective from `since` (a minor version of 1.x) on, possibly worded differently by version. */
export interface Check {
  id: string
  level: 'baseline' | 'restricted'
  since: number
  /** Baseline checks this one replaces at the restricted level. */
  overrides?: string[]
  run(pod: PodParts, minor: number): CheckResult
}

export const obj = (v: unknown): Obj => (isPlainObject(v) ? v : {})

/** Containers, init containers and ephemeral containers, in that order (upstream's visitContainers). */
export function containersOf(spec: Obj): Obj[] {
  return ['containers', 'initContainers', 'ephemeralContainers'].flatMap((field) => {
    const list = spec[field]
    return Array.isArray(list) ? list.filter(isPlainObject) : []
  })
}

export const nameOf = (c: Obj): string => String(c['name'] ?? '')
export const securityContextOf = (o: Obj): Obj | undefined => (isPlainObject(o['securityContext']) ? o['securityContext'] : undefined)

export const pluralize = (one: string, many: string, n: number): string => (n === 1 ? one : many)
/** Each item in plain double quotes, nothing escaped, as upstream's joinQuote. */
export const joinQuote = (items: readonly string[]): string => items.map((i) => `"${i}"`).join(', ')
/** `container "a"` or `containers "a", "b"`. */
export const containersPhrase = (names: readonly string[]): string => `${pluralize('container', 'containers', names.length)} ${joinQuote(names)}`
export const sortedUnique = (items: Iterable<string>): string[] => [...new Set(items)].sort()

/** A Windows pod (spec.os.name) is exempt from the Linux-only restricted checks from 1.25 on. */
export const isWindowsPod = (spec: Obj, minor: number): boolean => minor >= 25 && obj(spec['os'])['name'] === 'windows'
