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
 * as it always does, so request throughput is what it was. On etcd it may
 * grow while the daemon's script evaluates (youngGenerationGrowingDuring).
 *
 * An operator's own choice (a semi-space flag in NODE_OPTIONS or on the
 * command line) is left alone.
 */
import { setFlagsFromString } from 'node:v8'

/** V8's own growth factor (`node --v8-options`), restored once the server serves. */
const V8_DEFAULT_GROWTH_FACTOR = 2

const operatorSetSemiSpace = (): boolean => [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((arg) => /semi[-_]space/.test(arg))

/**
 * Runs `evaluate` with the young generation free to grow as V8 grows it, then
 * holds it again (at whatever size it reached), for a start on etcd.
 *
 * Held at 1 MiB while the daemon's script evaluates, the young generation is
 * collected some thirty times before the server listens; after the first few
 * V8 sets its first limit for the old generation a few megabytes above what
 * is live by then, and on etcd, whose start-up (the template's transactions,
 * the watch caches' first lists) allocates more than the embedded store's,
 * the old generation passes that limit before the server listens: a full
 * collection, its concurrent marking taking CPU that a small machine's cores
 * (and etcd beside) need for start-up itself. Grown during the evaluation
 * (to 8 MiB: what the script keeps makes V8 double it thrice), it is
 * collected some ten times, the limit is set later and higher, and start-up
 * runs no full collection: in envtest's start, some 40 ms less CPU and
 * `/healthz` some 25 ms sooner (docs/benchmarks.md). The price is some 4 MB
 * more resident at ready, which the embedded store's start, where no full
 * collection came, does not pay: there the young generation stays held.
 *
 * Growing later instead (held during the evaluation, free until it reaches a
 * few MiB) gained nothing: the early collections set the limit.
 */
export function youngGenerationGrowingDuring<R>(evaluate: () => R): R {
  if (operatorSetSemiSpace()) return evaluate()
  setFlagsFromString(`--semi-space-growth-factor=${V8_DEFAULT_GROWTH_FACTOR}`)
  try {
    return evaluate()
  } finally {
    setFlagsFromString('--semi-space-growth-factor=1')
  }
}

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
