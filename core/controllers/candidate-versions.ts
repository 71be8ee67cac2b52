/** The versions a server announces as a LeaseCandidate: `1.32.0` from `v1.32.0`, and the emulated release (else the same). */
export function candidateVersions(gitVersion: string, emulated?: { major: number; minor: number }): { binary: string; emulation: string } {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(gitVersion)
  const binary = m ? `${m[1]}.${m[2]}.${m[3]}` : '0.0.0'
  return { binary, emulation: emulated ? `${emulated.major}.${emulated.minor}.0` : binary }
}
