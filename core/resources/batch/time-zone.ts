/**
 * Whether a time zone name is one Go's time.LoadLocation finds, using the
 * IANA database the JavaScript engine carries (Intl) instead of zoneinfo files.
 */

/** Go's own names: the empty name and UTC are built in, Local is the host's zone. */
const BUILT_IN = new Set(['', 'UTC', 'Local'])

/** The error text of time.LoadLocation for `name`, or undefined when it loads. */
export function loadLocationError(name: string): string | undefined {
  if (BUILT_IN.has(name)) return undefined
  return isIanaZone(name) ? undefined : `unknown time zone ${name}`
}

function isIanaZone(name: string): boolean {
  // Offsets such as `+01:00` are Intl's extension; zoneinfo has no such file.
  if (/^[+-]/.test(name) || name.includes(':')) return false
  let resolved: string
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone
  } catch {
    return false
  }
  // Intl ignores case, zoneinfo file names do not: `america/new_york` is no zone to Go.
  return resolved === name || resolved.toLowerCase() !== name.toLowerCase()
}
