/**
 * `--emulated-version`: the built-in APIs a server of an older release
 * served. An entry introduced after the emulated release is not served,
 * unless `--runtime-config` names it (or its group/version) and
 * `--runtime-config-emulation-forward-compatible` allows it (the flag rules
 * refuse the first without the second: spec "Errors" 4). The catalogue has
 * one version of each resource and no removed APIs, so there is nothing
 * removed to bring back, and `--emulation-forward-compatible` (later
 * versions of beta APIs enabled at the emulated release) has no later
 * version to add.
 */
import { introducedInMinor } from './api-versions.js'
import type { ResourceEntry } from './catalogue.js'

export interface EmulationOptions {
  /** The release emulated (`--emulated-version`); at or after the server's own, nothing changes. */
  emulated: { major: number; minor: number }
  /** `--min-compatibility-version`. @default the release before `emulated` */
  minCompatibility?: { major: number; minor: number }
  /** `--runtime-config-emulation-forward-compatible`. @default false */
  runtimeConfigForwardCompatible?: boolean
}

export interface Emulation extends EmulationOptions {
  /** The server's own release. */
  binary: { major: number; minor: number }
}

/** Upstream's spellings of the core group (`v1`, `api/v1`) as `/v1`. */
function canonical(key: string): string {
  if (key === 'v1' || key.startsWith('v1/')) return `/${key}`
  if (key === 'api/v1' || key.startsWith('api/v1/')) return key.slice('api'.length)
  return key
}

/** Whether `runtimeConfig` enables the entry by its resource or group/version key. */
function namedEnabled(entry: ResourceEntry, runtimeConfig: Record<string, boolean>): boolean {
  const gv = `${entry.group}/${entry.version}`
  for (const [key, enabled] of Object.entries(runtimeConfig)) {
    const k = canonical(key)
    if (enabled && (k === gv || k === `${gv}/${entry.resource}`)) return true
  }
  return false
}

/** True when `emulated` is older than `binary`. */
export function isEmulating(emulation: Emulation | undefined): emulation is Emulation {
  if (!emulation) return false
  const { binary, emulated } = emulation
  return emulated.major < binary.major || (emulated.major === binary.major && emulated.minor < binary.minor)
}

/** The entries served at the emulated release (after `--runtime-config` chose among them). */
export function applyEmulation(entries: readonly ResourceEntry[], emulation: Emulation | undefined, runtimeConfig: Record<string, boolean>): ResourceEntry[] {
  if (!isEmulating(emulation)) return [...entries]
  const { emulated } = emulation
  return entries.filter((e) => {
    const introduced = introducedInMinor(e.group, e.version, e.resource)
    if (introduced === undefined || introduced <= emulated.minor) return true
    return (emulation.runtimeConfigForwardCompatible ?? false) && namedEnabled(e, runtimeConfig)
  })
}
