/**
 * Loaded into a daemon under measurement (`NODE_OPTIONS=--import <this
 * file>`): the daemon's own event-loop delay, which the load of the machine
 * moves less than a client's latency does. On SIGUSR2 it writes the delay
 * since the last signal to EVENT_LOOP_PROBE_FILE as one JSON object (ms,
 * and a sequence number) and starts counting anew. Plain JavaScript, so the
 * built daemon needs no loader for it.
 */
import { writeFileSync } from 'node:fs'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import process from 'node:process'

const file = process.env.EVENT_LOOP_PROBE_FILE
if (file) {
  const histogram = monitorEventLoopDelay({ resolution: 1 })
  histogram.enable()
  let seq = 0
  process.on('SIGUSR2', () => {
    const ms = (ns) => ns / 1e6
    const figures = { seq: ++seq, p50Ms: ms(histogram.percentile(50)), p99Ms: ms(histogram.percentile(99)), maxMs: ms(histogram.max), count: histogram.count }
    writeFileSync(file, JSON.stringify(figures))
    histogram.reset()
  })
}

/**
 * EVENT_LOOP_PROBE_CPU_PROFILE=<file>: a CPU profile of the daemon from the
 * probe's load to its exit (`--cpu-prof` is refused in NODE_OPTIONS). The
 * inspector answers a session on its own thread synchronously, so the
 * profile can be written from the exit handler.
 */
const profileFile = process.env.EVENT_LOOP_PROBE_CPU_PROFILE
if (profileFile) {
  const { Session } = await import('node:inspector')
  const session = new Session()
  session.connect()
  session.post('Profiler.enable')
  session.post('Profiler.setSamplingInterval', { interval: 200 })
  session.post('Profiler.start')
  process.on('exit', () => {
    session.post('Profiler.stop', (err, result) => {
      if (!err) writeFileSync(profileFile, JSON.stringify(result.profile))
    })
  })
}
