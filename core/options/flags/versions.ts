/**
 * Versions and feature gates on the command line: `<major>.<minor>`
 * versions (`--emulated-version`, `--min-compatibility-version`,
 * `--show-hidden-metrics-for-version`) and `component:Gate=bool` pairs.
 * The only component this server registers is `kube`, as kube-apiserver.
 */
import { readCsvRecord } from './lists.js'
import { bad, ok, type Parsed, parseBool } from './values.js'

export const KUBE_COMPONENT = 'kube'

export interface MajorMinor {
  major: number
  minor: number
}

export function formatMajorMinor(v: MajorMinor): string {
  return `${v.major}.${v.minor}`
}

export function compareMajorMinor(a: MajorMinor, b: MajorMinor): number {
  return a.major - b.major || a.minor - b.minor
}

/** Moves `by` minor releases back (or forward when negative), as upstream's SubtractMinor. */
export function minorsBefore(v: MajorMinor, by: number): MajorMinor {
  return { major: v.major, minor: Math.max(0, v.minor - by) }
}

/**
 * A generic version as upstream's version.ParseGeneric reads it (`1.31`,
 * `v1.31`, `1.31.0`), with its patch, which callers may refuse.
 */
export function parseVersion(text: string): Parsed<MajorMinor & { patch: number }> {
  const m = /^\s*v?(\d+(?:\.\d+)*)\s*$/.exec(text)
  const parts = m?.[1]?.split('.') ?? []
  if (parts.length < 2 || parts.length > 3) return bad(`illegal version string ${JSON.stringify(text)}`)
  if ((parts[0] ?? '').length > 1 && parts[0]?.startsWith('0')) {
    return bad(`illegal zero-prefixed version component ${JSON.stringify(parts[0])} in ${JSON.stringify(text)}`)
  }
  const [major = 0, minor = 0, patch = 0] = parts.map(Number)
  return ok({ major, minor, patch })
}

/** The version a `vX.Y.Z` server version string names, without its patch. */
export function serverMajorMinor(gitVersion: string): MajorMinor {
  const m = /^v?(\d+)\.(\d+)/.exec(gitVersion)
  return { major: Number(m?.[1] ?? 0), minor: Number(m?.[2] ?? 0) }
}

/**
 * `--emulated-version` and `--min-compatibility-version`: a comma list of
 * `[component=]<major>.<minor>`; the component defaults to `kube`.
 */
export function parseComponentVersions(
  text: string,
  previous: Record<string, MajorMinor> | undefined,
): Parsed<Record<string, MajorMinor>> {
  const entries = text === '' ? ok<string[]>([]) : readCsvRecord(text)
  if ('reason' in entries) return entries
  const map = { ...previous }
  for (const entry of entries.value) {
    const eq = entry.indexOf('=')
    const component = eq < 0 ? KUBE_COMPONENT : entry.slice(0, eq).trim()
    const parsed = parseVersion(eq < 0 ? entry : entry.slice(eq + 1))
    if ('reason' in parsed) return parsed
    const { major, minor, patch } = parsed.value
    if (patch !== 0) return bad(`patch version not allowed, got: ${component}=${major}.${minor}.${patch}`)
    if (component !== KUBE_COMPONENT) return bad(`component not registered: ${component}`)
    const existing = map[component]
    if (existing) {
      return bad(`duplicate version flag, ${component}=${formatMajorMinor(existing)} and ${component}=${major}.${minor}`)
    }
    map[component] = { major, minor }
  }
  return ok(map)
}

/**
 * `--feature-gates`: `component:Gate=bool` or `Gate=bool` pairs, comma
 * separated; repeatable. Kept by the component as written (`''` when
 * omitted) because mixing `kube:` and no prefix is an error (rules.ts).
 */
export function parseFeatureGates(
  text: string,
  previous: Record<string, Record<string, boolean>> | undefined,
): Parsed<Record<string, Record<string, boolean>>> {
  const gates: Record<string, Record<string, boolean>> = {}
  for (const [component, settings] of Object.entries(previous ?? {})) gates[component] = { ...settings }
  for (const pair of text.split(',')) {
    if (pair === '') continue
    const colon = pair.indexOf(':')
    if (colon === 0) return bad('malformed pair, expect string:string')
    const component = colon < 0 ? '' : pair.slice(0, colon).trim()
    const setting = (colon < 0 ? pair : pair.slice(colon + 1)).trim()
    if (component !== '' && component !== KUBE_COMPONENT) return bad(`component not registered: ${component}`)
    const eq = setting.indexOf('=')
    const name = (eq < 0 ? setting : setting.slice(0, eq)).trim()
    if (eq < 0) return bad(`missing bool value for ${name}`)
    const value = setting.slice(eq + 1).trim()
    const enabled = parseBool(value)
    if ('reason' in enabled) {
      return bad(`invalid value of ${name}=${value}, err: strconv.ParseBool: parsing ${JSON.stringify(value)}: invalid syntax`)
    }
    gates[component] = { ...gates[component], [name]: enabled.value }
  }
  return ok(gates)
}
