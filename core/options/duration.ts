/** Go-style durations (`300ms`, `1m30s`, `1h0m0s`) in milliseconds; undefined when malformed. */
const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
}

export function parseGoDuration(text: string): number | undefined {
  const m = /^([-+]?)((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h))+$/.exec(text)
  if (!m) return text === '0' ? 0 : undefined
  let total = 0
  for (const part of text.slice(m[1]?.length ?? 0).matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/g)) {
    total += Number(part[1]) * (UNIT_MS[part[2] ?? ''] ?? 0)
  }
  return m[1] === '-' ? -total : total
}
