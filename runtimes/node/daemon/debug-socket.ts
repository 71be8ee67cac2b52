/**
 * `--debug-socket-path`: the profiling handlers on a unix socket, without
 * authentication or authorization (spec: "HTTP paths named by the
 * interface"). Whoever may open the socket file may profile, so the file is
 * 0600 from the moment it exists at its path: node:net binds with the
 * process's umask and cannot chmod before listening, so the socket is bound
 * inside a fresh 0700 directory beside the path (no one else can reach it
 * there), made 0600, then renamed into place. A stale file from an earlier
 * run is replaced.
 */
import { chmod, mkdtemp, rename, rm } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import { basename, dirname, join } from 'node:path'
import { getRequestListener } from '@hono/node-server'
import { profilingHandler } from '../../../core/api/profiling.js'
import type { Profiler } from '../../../core/ports.js'

export interface DebugSocket {
  close(): Promise<void>
}

function listen(server: Server, path: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(path, () => {
      server.off('error', reject)
      resolve()
    })
  })
}

function close(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  })
}

export async function serveDebugSocket(path: string, profiler: Profiler, setVerbosity?: (level: number) => void): Promise<DebugSocket> {
  const handler = profilingHandler(profiler, setVerbosity)
  const server = createServer(getRequestListener((request) => handler.fetch(request)))
  // mkdtemp makes the directory 0700 whatever the umask; beside the path, so the rename stays on one file system.
  const staging = await mkdtemp(join(dirname(path), `.${basename(path)}.`))
  const bound = join(staging, 'socket')
  try {
    await listen(server, bound)
    await chmod(bound, 0o600)
    await rm(path, { force: true })
    await rename(bound, path)
  } catch (err) {
    await close(server)
    throw err
  } finally {
    await rm(staging, { recursive: true, force: true })
  }
  return {
    // The listener unlinks the name it bound, which is gone: the socket file at `path` is removed here.
    close: () => close(server).then(() => rm(path, { force: true })),
  }
}
