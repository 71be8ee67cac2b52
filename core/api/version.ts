/**
 * `/version`. Its `minor` matters beyond display: the kubectl on the
 * machines dispatches to a kubectl build chosen by it.
 */
export interface VersionInfo {
  major: string
  minor: string
  gitVersion: string
  gitCommit: string
  gitTreeState: string
  buildDate: string
  goVersion: string
  compiler: string
  platform: string
  /** Set while emulating an older release (as later upstream releases report it); `major`/`minor` stay the server's own. */
  emulationMajor?: string
  emulationMinor?: string
  minCompatibilityMajor?: string
  minCompatibilityMinor?: string
}

export const DEFAULT_VERSION = 'v1.32.0'

/** Parses `vX.Y.Z[-pre][+build]` into the reported document; throws on anything else. */
export function versionInfo(gitVersion: string, platform = 'linux/amd64'): VersionInfo {
  const m = /^v(\d+)\.(\d+)\.(\d+)(?:[-+].*)?$/.exec(gitVersion)
  if (!m) throw new Error(`invalid version ${JSON.stringify(gitVersion)}: expected vMAJOR.MINOR.PATCH`)
  return {
    major: m[1] ?? '',
    minor: m[2] ?? '',
    gitVersion,
    gitCommit: '0000000000000000000000000000000000000000',
    gitTreeState: 'clean',
    buildDate: '1970-01-01T00:00:00Z',
    goVersion: 'n/a (TypeScript)',
    compiler: 'tsc',
    platform,
  }
}

/** The document of a server emulating `emulated`, compatible down to `minCompatibility`. */
export function withEmulation(
  info: VersionInfo,
  emulated: { major: number; minor: number },
  minCompatibility: { major: number; minor: number },
): VersionInfo {
  return {
    ...info,
    emulationMajor: String(emulated.major),
    emulationMinor: String(emulated.minor),
    minCompatibilityMajor: String(minCompatibility.major),
    minCompatibilityMinor: String(minCompatibility.minor),
  }
}
