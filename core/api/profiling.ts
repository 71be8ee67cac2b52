/**
 * `/debug/pprof/` (`--profiling`): Go's net/http/pprof paths that this
 * runtime can fill, answered in pprof's own format (gzip-compressed
 * `profile.proto`, which `go tool pprof` reads): `profile` (CPU) and `heap`
 * and `allocs` (sampled allocations). Behind the chain they are
 * non-resource paths like any other, so only users allowed `get` on them
 * (system:masters by default) may profile; the debug socket serves the same
 * routes without the chain. A profile holds stacks and numbers only: no
 * route dumps the heap's contents.
 */
import { type Hono, Hono as HonoApp } from 'hono'
import { encodeProfileGzip, type SampledProfile } from '../encoding/pprof.js'
import { renderProfileText } from '../encoding/pprof-text.js'
import { installDebugFlagsRoutes } from './debug-flags.js'
import { sizedResponse, textResponse } from '../http/respond.js'
import type { Env } from 'hono'
import type { Profiler } from '../ports.js'

const DEFAULT_CPU_SECONDS = 30
/** Longer profiles would outlive the request time-out anyway; upstream's client asks for 30 s. */
const MAX_CPU_SECONDS = 300

const INDEX = `<html>
<head><title>/debug/pprof/</title></head>
<body>
/debug/pprof/<br>
<br>
Profiles in pprof's format (go tool pprof reads them); ?debug=1 shows heap and allocs as text:<br>
<a href="profile?seconds=30">profile</a>: CPU profile of the next ?seconds (default 30)<br>
<a href="heap">heap</a>: sampled allocations of live objects (?gc=1: after a full collection)<br>
<a href="allocs">allocs</a>: the same samples as heap (the runtime keeps none of freed objects)<br>
</body>
</html>
`

/** Go's serveError: plain text and the X-Go-Pprof header, which pprof's client reads as "the server said no". */
function pprofError(status: number, text: string): Response {
  const response = textResponse(`${text}\n`, status)
  response.headers.set('x-go-pprof', '1')
  return response
}

async function download(profile: SampledProfile, fileName: string): Promise<Response> {
  const gzipped = await encodeProfileGzip(profile)
  return sizedResponse(gzipped, {
    headers: {
      'content-type': 'application/octet-stream',
      'content-disposition': `attachment; filename="${fileName}"`,
      'x-content-type-options': 'nosniff',
    },
  })
}

/** Go's strconv.Atoi as net/http/pprof uses it: anything but a whole decimal number is 0. */
function atoi(raw: string | undefined): number {
  return raw !== undefined && /^[+-]?\d+$/.test(raw) ? Number(raw) : 0
}

function cpuSeconds(raw: string | undefined): number | undefined {
  if (raw === undefined || raw === '') return DEFAULT_CPU_SECONDS
  const seconds = Number(raw)
  return Number.isInteger(seconds) && seconds > 0 && seconds <= MAX_CPU_SECONDS ? seconds : undefined
}

/**
 * `heap` and `allocs`, with Go's query parameters: `gc` (heap only, as Go)
 * collects first; `debug` other than 0 answers text; `seconds` asks Go for a
 * delta of a cumulative profile, which V8's live-object samples cannot give.
 */
async function heapProfile(profiler: Profiler, name: 'heap' | 'allocs', query: (key: string) => string | undefined): Promise<Response> {
  if (!profiler.heapProfile) return pprofError(501, `Heap profiles are not available: ${profiler.heapUnavailable ?? 'this runtime has no sampling heap profiler'}`)
  const seconds = query('seconds')
  if (seconds !== undefined && seconds !== '') {
    if (!(atoi(seconds) > 0)) return pprofError(400, 'invalid value for "seconds" - must be a positive integer')
    return pprofError(400, '"seconds" parameter is not supported for this profile type')
  }
  const profile = await profiler.heapProfile({ gc: name === 'heap' && atoi(query('gc')) > 0 })
  if (atoi(query('debug')) !== 0) return textResponse(renderProfileText(name, profile))
  return download(profile, name)
}

/**
 * The CPU profile of the next `?seconds`, cut short when the request ends
 * first (`stop`: the client left, or its deadline passed), as Go's handler
 * stops profiling when the request's context is done. A second profile
 * while one runs is refused with Go's 500 (`cpu profiling already in use`).
 */
async function cpuProfile(profiler: Profiler, query: (key: string) => string | undefined, stop: AbortSignal): Promise<Response> {
  const seconds = cpuSeconds(query('seconds'))
  if (seconds === undefined) return textResponse(`Bad Request: ?seconds must be a whole number from 1 to ${MAX_CPU_SECONDS}\n`, 400)
  let profile: SampledProfile
  try {
    profile = await profiler.cpuProfile(seconds, stop)
  } catch (err) {
    return pprofError(500, `Could not enable CPU profiling: ${(err as Error).message}`)
  }
  return download(profile, 'profile')
}

/**
 * The profiles by name, behind one parameter route: hono's compiled router
 * (one regular expression for the whole table) cannot take a parameter
 * beside fixed names at the same place, and a table it cannot compile is
 * matched by its slower trie on every request of the server.
 */
function namedProfile(profiler: Profiler, name: string, query: (key: string) => string | undefined, stop: () => AbortSignal): Promise<Response> | Response {
  switch (name) {
    case 'profile':
      return cpuProfile(profiler, query, stop())
    case 'heap':
    case 'allocs':
      return heapProfile(profiler, name, query)
    default:
      return pprofError(404, 'Unknown profile')
  }
}

export function installProfilingRoutes<E extends Env>(app: Hono<E>, profiler: Profiler): void {
  app.get('/debug/pprof', (c) => c.redirect('/debug/pprof/', 301))
  app.get('/debug/pprof/', () => sizedResponse(INDEX, { headers: { 'content-type': 'text/html; charset=utf-8', 'x-content-type-options': 'nosniff' } }))
  app.get('/debug/pprof/:name', (c) =>
    namedProfile(
      profiler,
      c.req.param('name'),
      (key) => c.req.query(key),
      () => {
        // The request's end: its signal (the client left), or the chain's deadline where one is set.
        const deadline = (c.var as { deadline?: AbortSignal }).deadline
        return deadline ? AbortSignal.any([c.req.raw.signal, deadline]) : c.req.raw.signal
      },
    ),
  )
}

/**
 * The profiling routes alone, with no authentication or authorization: what
 * `--debug-socket-path` serves, with `/debug/flags/v` as upstream's socket has it.
 */
export function profilingHandler(profiler: Profiler, setVerbosity?: (level: number) => void): { fetch(request: Request): Promise<Response> } {
  const app = new HonoApp()
  installProfilingRoutes(app, profiler)
  if (setVerbosity) installDebugFlagsRoutes(app, setVerbosity)
  app.notFound(() => textResponse('404 page not found\n', 404))
  return { fetch: async (request) => app.fetch(request) }
}
