/**
 * `--runtime-config`: which group/versions and resources the server serves,
 * as upstream's resourceconfig merges it. Keys: `api/all`, `api/ga`,
 * `api/beta`, `api/alpha` (every group/version of that stability), then
 * `<group>/<version>`, then `<group>/<version>/<resource>` (the most
 * specific wins). `v1` and `api/v1` name the core group (`/v1`);
 * `api/legacy` is accepted and ignored, as upstream does.
 */
import type { ResourceEntry } from './catalogue.js'

/** A key the server cannot honour; `key` names it as the user wrote it. */
export class RuntimeConfigError extends Error {
  constructor(
    readonly key: string,
    message: string,
  ) {
    super(`--runtime-config: ${message}`)
    this.name = 'RuntimeConfigError'
  }
}

const STABILITY_MATCHERS: readonly [key: string, matches: (version: string) => boolean][] = [
  ['api/all', () => true],
  ['api/ga', (v) => /^v\d+$/.test(v)],
  ['api/beta', (v) => /^v\d+beta\d+$/.test(v)],
  ['api/alpha', (v) => /^v\d+alpha\d+$/.test(v)],
]

const gvKey = (group: string, version: string) => `${group}/${version}`

/** Upstream's spellings of the core group (`v1`, `api/v1`, with or without a resource) as `/v1...`. */
function canonicalKey(key: string): string | undefined {
  if (key === 'api/legacy') return undefined
  if (key === 'v1' || key.startsWith('v1/')) return `/${key}`
  if (key === 'api/v1' || key.startsWith('api/v1/')) return key.slice('api'.length)
  return key
}

interface Preference {
  key: string
  enabled: boolean
  group: string
  version: string
  resource?: string
}

/** Reads the group/version and resource keys, refusing what upstream refuses. */
function preferences(runtimeConfig: Record<string, boolean>, entries: readonly ResourceEntry[]): Preference[] {
  const groups = new Set(entries.map((e) => e.group))
  const groupVersions = new Set(entries.map((e) => gvKey(e.group, e.version)))
  const out: Preference[] = []
  const unknownGroups: string[] = []
  for (const [written, enabled] of Object.entries(runtimeConfig)) {
    const key = canonicalKey(written)
    if (key === undefined || STABILITY_MATCHERS.some(([k]) => k === key)) continue
    const tokens = key.split('/')
    if (tokens.length !== 2 && tokens.length !== 3) throw new RuntimeConfigError(written, `invalid key ${written}`)
    const [group = '', version = '', resource] = tokens
    if (!version) throw new RuntimeConfigError(written, `invalid key ${written}`)
    if (!groups.has(group)) {
      unknownGroups.push(group)
      continue
    }
    if (!groupVersions.has(gvKey(group, version)))
      throw new RuntimeConfigError(written, `group version ${group ? `${group}/` : ''}${version} that has not been registered`)
    if (resource !== undefined && resource.toLowerCase() !== resource)
      throw new RuntimeConfigError(
        written,
        `invalid key ${written}: group/version/resource and resource is always lowercase plural, not ${JSON.stringify(resource)}`,
      )
    out.push({ key: written, enabled, group, version, ...(resource !== undefined ? { resource } : {}) })
  }
  if (unknownGroups.length > 0) throw new RuntimeConfigError(unknownGroups[0]!, `unknown api groups ${unknownGroups.join(',')}`)
  return out
}

/**
 * The entries to serve under `runtimeConfig` (keys as the flag writes them,
 * values already read as booleans). Every entry of the built-in catalogue is
 * enabled by default, as upstream enables its GA group/versions. Throws
 * RuntimeConfigError for a key upstream refuses, or one that would take away
 * the core group.
 */
export function applyRuntimeConfig(entries: readonly ResourceEntry[], runtimeConfig: Record<string, boolean>): ResourceEntry[] {
  const keys = Object.keys(runtimeConfig)
  // Nothing asked for: every entry but the alpha ones, as below with no key, without building its maps (each server starts here).
  if (keys.length === 0) return entries.filter((e) => !e.offByDefault)
  if (keys.length === 1 && keys[0] === 'api/all' && runtimeConfig['api/all'] === false)
    throw new RuntimeConfigError('api/all', 'invalid key with only api/all=false')

  const versionEnabled = new Map(entries.map((e) => [gvKey(e.group, e.version), true]))
  for (const [key, matches] of STABILITY_MATCHERS) {
    const enabled = runtimeConfig[key]
    if (enabled === undefined) continue
    for (const gv of versionEnabled.keys()) if (matches(gv.slice(gv.indexOf('/') + 1))) versionEnabled.set(gv, enabled)
  }
  const prefs = preferences(runtimeConfig, entries)
  for (const p of prefs) if (p.resource === undefined) versionEnabled.set(gvKey(p.group, p.version), p.enabled)
  const resourceEnabled = new Map<string, boolean>()
  for (const p of prefs) if (p.resource !== undefined) resourceEnabled.set(`${gvKey(p.group, p.version)}/${p.resource}`, p.enabled)

  if (versionEnabled.get(gvKey('', 'v1')) === false) {
    const explicit = keys.find((k) => canonicalKey(k) === '/v1' && runtimeConfig[k] === false)
    const culprit = explicit ?? (runtimeConfig['api/ga'] === false ? 'api/ga' : 'api/all')
    throw new RuntimeConfigError(culprit, `the core group version v1 cannot be disabled (${culprit}=false)`)
  }
  // A stability key or a group/version key turns an alpha entry on; the default leaves it off.
  const explicitVersion = new Map<string, boolean>()
  for (const [key, matches] of STABILITY_MATCHERS) {
    const enabled = runtimeConfig[key]
    if (enabled === undefined) continue
    for (const gv of versionEnabled.keys()) if (matches(gv.slice(gv.indexOf('/') + 1))) explicitVersion.set(gv, enabled)
  }
  for (const p of prefs) if (p.resource === undefined) explicitVersion.set(gvKey(p.group, p.version), p.enabled)
  return entries.filter((e) => {
    const gv = gvKey(e.group, e.version)
    const byVersion = e.offByDefault ? (explicitVersion.get(gv) ?? false) : (versionEnabled.get(gv) ?? true)
    return resourceEnabled.get(`${gv}/${e.resource}`) ?? byVersion
  })
}
