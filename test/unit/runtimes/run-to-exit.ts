import { runDaemon, type DaemonIO } from '../../../runtimes/node/daemon/daemon.js'

export interface DaemonExit {
  code: number
  stdout: string
  stderr: string
  /** The daemon got as far as listening; the helper stopped it at once. */
  listening: boolean
}

/**
 * Runs the daemon's command line handling with captured output, for cases that should stop before
 * serving. One that starts a server anyway is shut down as soon as it listens and reports
 * `listening`, so a test expecting a refusal fails instead of hanging the suite.
 */
export async function runToExit(argv: string[], io: Partial<DaemonIO> = {}): Promise<DaemonExit> {
  let stdout = ''
  let stderr = ''
  let listening = false
  const stop = new AbortController()
  const code = await runDaemon(argv, {
    logStream: { write: () => {} },
    ...io,
    stop: stop.signal,
    onListening: () => {
      listening = true
      stop.abort()
    },
    stdout: (t) => {
      stdout += t
    },
    stderr: (t) => {
      stderr += t
    },
  })
  return { code, stdout, stderr, listening }
}
