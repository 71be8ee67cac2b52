/**
 * `/healthz`, `/livez`, `/readyz` and their per-check paths, answering as
 * upstream does: `ok`, or with `?verbose` (and always on failure) one
 * `[+]name ok` / `[-]name failed: reason withheld` line per check.
 */
import { textResponse } from '../http/respond.js'
import type { HealthCheck } from '../lifecycle/health-check.js'

/**
 * A check that passes while the server is younger than `graceMs`
 * (`--livez-grace-period`), and runs as itself afterwards.
 */
export function graceForStartup(check: HealthCheck, graceMs: number, uptimeMs: () => number): HealthCheck {
  if (graceMs <= 0) return check
  return { name: check.name, check: () => (uptimeMs() < graceMs ? undefined : check.check()) }
}

async function run(c: HealthCheck): Promise<string | undefined> {
  try {
    await c.check()
    return undefined
  } catch (err) {
    return err instanceof Error ? err.message : String(err)
  }
}

/** Told of each check an endpoint's root ran: its name, and whether it passed (the health check SLIs). */
export type HealthObserver = (check: string, passed: boolean) => void

/**
 * Answers `/<endpoint>` (all checks) and `/<endpoint>/<check>` (one). As
 * upstream, only the root tells `observe` of each check it ran (not of
 * those excluded, nor of a single check's path).
 */
export async function healthResponse(endpoint: string, checks: readonly HealthCheck[], url: URL, observe?: HealthObserver): Promise<Response> {
  const sub = url.pathname.slice(endpoint.length + 2)
  if (sub) {
    const one = checks.find((c) => c.name === sub)
    if (!one) return textResponse('404 page not found\n', 404)
    const failure = await run(one)
    return failure === undefined ? textResponse('ok') : textResponse(`internal server error: ${failure}\n`, 500)
  }
  const excluded = new Set(url.searchParams.getAll('exclude').flatMap((e) => e.split(',')).filter(Boolean))
  const lines: string[] = []
  let failed = false
  const results = await Promise.all(checks.map(async (c) => [c, excluded.has(c.name) ? null : await run(c)] as const))
  for (const [c, failure] of results) {
    if (failure !== null) observe?.(c.name, failure === undefined)
    if (failure === null) lines.push(`[+]${c.name} excluded: ok`)
    else if (failure === undefined) lines.push(`[+]${c.name} ok`)
    else {
      failed = true
      lines.push(`[-]${c.name} failed: reason withheld`)
    }
  }
  const unknown = [...excluded].filter((name) => !checks.some((c) => c.name === name))
  const warning = unknown.length
    ? `warn: some health checks cannot be excluded: no matches for ${unknown.map((n) => JSON.stringify(n)).join(',')}\n`
    : ''
  if (failed) return textResponse(`${lines.join('\n')}\n${warning}${endpoint} check failed\n`, 500)
  if (url.searchParams.has('verbose')) return textResponse(`${lines.join('\n')}\n${warning}${endpoint} check passed\n`)
  return textResponse('ok')
}
