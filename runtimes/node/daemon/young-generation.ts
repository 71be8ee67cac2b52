/**
 * The young generation's size while the daemon starts.
 *
 * Start-up keeps most of what it allocates (type tables, policies, the
 * objects it reads and writes, the watch cache), and V8 answers objects that
 * survive their first collection by doubling the young generation, up to
 * 16 MiB a semi-space: some 32 MiB resident by the first `/readyz`, most of
 * it empty. Holding the young generation at its initial 1 MiB until the
 * server serves costs a few more (cheap) scavenges during start-up and keeps
 * those megabytes out of the memory at ready; from then on V8 grows it again
 * as it always does, so request throughput is what it was.
 *
 * An operator's own choice (a semi-space flag in NODE_OPTIONS or on the
 * command line) is left alone.
 */
import { setFlagsFromString } from 'node:v8'

/** V8's own growth factor (`node --v8-options`), restored once the server serves. */
const V8_DEFAULT_GROWTH_FACTOR = 2

const operatorSetSemiSpace = (): boolean => [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((arg) => /semi[-_]space/.test(arg))

/** Stops the young generation from growing; the function returned lets it grow again. */
export function youngGenerationHeldUntilListening(): () => void {
  if (operatorSetSemiSpace()) return () => {}
  setFlagsFromString('--semi-space-growth-factor=1')
  let released = false
  return () => {
    if (released) return
    released = true
    setFlagsFromString(`--semi-space-growth-factor=${V8_DEFAULT_GROWTH_FACTOR}`)
  }
}
