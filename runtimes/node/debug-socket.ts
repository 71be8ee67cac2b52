/**
 * `--debug-socket-path`: the profiling handlers on a unix socket, without
 * authentication or authorization (spec: "HTTP paths named by the
 * interface"). Whoever may open the socket file may profile, so the file
 * is made 0600, and a stale file from an earlier run is replaced.
 */
import { chmod, rm } from 'node:fs/promises'
import { createServer } from 'node:http'
import { getRequestListener } from '@hono/node-server'
import { profilingHandler } from '../../core/api/profiling.js'
import type { Profiler } from '../../core/ports.js'

export interface DebugSocket {
  close(): Promise<void>
}

export async function serveDebugSocket(path: string, profiler: Profiler): Promise<DebugSocket> {
  await rm(path, { force: true })
  const handler = profilingHandler(profiler)
  const server = createServer(getRequestListener((request) => handler.fetch(request)))
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(path, () => {
      server.off('error', reject)
      resolve()
    })
  })
  await chmod(path, 0o600)
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
