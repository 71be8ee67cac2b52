/**
 * What a simulated container does when it runs, read from the command it
 * was given. No process runs on a simulated node; but a test that gives a
 * Job's pod `sleep 30` means it to run for a while, and `sh -c "exit 1"`
 * means it to fail. The few commands below are understood, the way a shell
 * would run them: `sleep N` (on its own or as a shell's whole script) runs
 * N seconds and exits 0, `exit N` exits with N, `true` and `false` exit 0
 * and 1. Any other command runs as the node's defaults say (it exits at
 * once with 0 where the pod's containers are expected to exit).
 */
import { isPlainObject } from '../machinery/object.js'

export interface ContainerProcess {
  /** Seconds it runs before it exits; Infinity: it never does by itself. Absent: the node's default. */
  runSeconds?: number
  /** Its exit code. Absent: 0. */
  exitCode?: number
}

const SHELLS = new Set(['sh', 'bash', 'ash', 'dash', '/bin/sh', '/bin/bash', '/bin/ash', '/bin/dash', '/usr/bin/bash', '/usr/bin/sh'])
const SLEEP = new Set(['sleep', '/bin/sleep', '/usr/bin/sleep'])
const TRUE = new Set(['true', '/bin/true', '/usr/bin/true'])
const FALSE = new Set(['false', '/bin/false', '/usr/bin/false'])

/** `sleep`'s operand: seconds, with GNU sleep's s/m/h/d suffixes, or `infinity`. */
function sleepSeconds(operand: string | undefined): number | undefined {
  if (operand === undefined) return undefined
  if (operand === 'infinity' || operand === 'inf') return Infinity
  const m = /^(\d+(?:\.\d+)?)([smhd]?)$/.exec(operand)
  if (!m) return undefined
  const unit = { '': 1, s: 1, m: 60, h: 3600, d: 86_400 }[m[2] as '' | 's' | 'm' | 'h' | 'd']
  return Number(m[1]) * unit
}

/** The process of a command line (its words), when it is one of the understood ones; `exit` only as a shell's. */
function processOf(words: readonly string[], inShell = false): ContainerProcess | undefined {
  const [program, ...rest] = words
  if (program === undefined) return undefined
  if (SLEEP.has(program) && rest.length === 1) {
    const seconds = sleepSeconds(rest[0])
    return seconds === undefined ? undefined : { runSeconds: seconds }
  }
  if (TRUE.has(program) && rest.length === 0) return { exitCode: 0 }
  if (FALSE.has(program) && rest.length === 0) return { exitCode: 1 }
  if (inShell && program === 'exit' && rest.length <= 1) {
    const code = rest.length ? Number(rest[0]) : 0
    return Number.isInteger(code) && code >= 0 ? { exitCode: code % 256 } : undefined
  }
  if (SHELLS.has(program) && rest.length === 2 && rest[0] === '-c') {
    const script = rest[1]!.trim().replace(/;$/, '').trim()
    // A one-word-at-a-time script only: quotes, pipes, variables and lists are a real shell's.
    if (!/^[\w./ -]*$/.test(script)) return undefined
    return processOf(script.split(/\s+/), true)
  }
  return undefined
}

/** What the container runs, from its command and args as the runtime joins them. */
export function containerProcess(container: unknown): ContainerProcess | undefined {
  if (!isPlainObject(container)) return undefined
  const words = [container['command'], container['args']].flatMap((v) => (Array.isArray(v) ? v.map(String) : []))
  return processOf(words)
}
