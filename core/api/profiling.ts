/**
 * `/debug/pprof/` (`--profiling`): the paths of Go's pprof that make sense
 * for this runtime, each answered with the runtime's own format rather than
 * pprof's. Behind the chain they are non-resource paths like any other, so
 * only users allowed `get` on them (system:masters by default) may profile;
 * the debug socket serves the same routes without the chain.
 */
import { type Hono, Hono as HonoApp } from 'hono'
import { textResponse } from '../http/respond.js'
import type { Env } from 'hono'
import type { ProfileFile, Profiler } from '../ports.js'

const DEFAULT_CPU_SECONDS = 30
/** Longer profiles would outlive the request time-out anyway; upstream's client asks for 30 s. */
const MAX_CPU_SECONDS = 300

const INDEX = `<html>
<head><title>/debug/pprof/</title></head>
<body>
/debug/pprof/<br>
<br>
Profiles in the formats of the runtime (Chrome DevTools, VS Code, speedscope read them):<br>
<a href="profile?seconds=30">profile</a>: CPU profile (.cpuprofile) of the next ?seconds (default 30)<br>
<a href="heap">heap</a>: heap snapshot (.heapsnapshot)<br>
</body>
</html>
`

function download(file: ProfileFile): Response {
  return new Response(file.body, {
    headers: {
      'content-type': 'application/octet-stream',
      'content-disposition': `attachment; filename="${file.fileName}"`,
      'x-content-type-options': 'nosniff',
    },
  })
}

/** Go's pprof answers a bad ?seconds with 400 and this text. */
function cpuSeconds(raw: string | undefined): number | undefined {
  if (raw === undefined || raw === '') return DEFAULT_CPU_SECONDS
  const seconds = Number(raw)
  return Number.isInteger(seconds) && seconds > 0 && seconds <= MAX_CPU_SECONDS ? seconds : undefined
}

export function installProfilingRoutes<E extends Env>(app: Hono<E>, profiler: Profiler): void {
  app.get('/debug/pprof', (c) => c.redirect('/debug/pprof/', 301))
  app.get('/debug/pprof/', () => new Response(INDEX, { headers: { 'content-type': 'text/html; charset=utf-8', 'x-content-type-options': 'nosniff' } }))
  app.get('/debug/pprof/profile', async (c) => {
    const seconds = cpuSeconds(c.req.query('seconds'))
    if (seconds === undefined) return textResponse(`Bad Request: ?seconds must be a whole number from 1 to ${MAX_CPU_SECONDS}\n`, 400)
    return download(await profiler.cpuProfile(seconds))
  })
  app.get('/debug/pprof/heap', async () => download(await profiler.heapSnapshot()))
  app.get('/debug/pprof/:name', () => textResponse('Unknown profile\n', 404))
}

/** The profiling routes alone, with no authentication or authorization: what `--debug-socket-path` serves. */
export function profilingHandler(profiler: Profiler): { fetch(request: Request): Promise<Response> } {
  const app = new HonoApp()
  installProfilingRoutes(app, profiler)
  app.notFound(() => textResponse('404 page not found\n', 404))
  return { fetch: async (request) => app.fetch(request) }
}
