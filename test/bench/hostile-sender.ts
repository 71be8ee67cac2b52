/**
 * The hostile sender of the daemon measurement in hostile-input.ts, in a
 * process of its own (as hostile-get-client.ts is), so that the benchmark
 * can give it a core and a priority of its own: on a machine of 2 cores the
 * attacker's work (encrypting megabytes for TLS) would otherwise hold up the
 * GET client, as it never does when the two are different machines.
 *
 * Started with the daemon's port, certificate directory and the set of
 * requests to send (`worst`: the fuzz suite's worst inputs; `ordinary`:
 * ordinaryInputs()). Reads commands from stdin, one JSON line each, and
 * answers each with one line of stdout:
 * - `{"cmd":"warm","passes":2}`: each request `passes` times, then `{}`;
 * - `{"cmd":"start"}`: `{}` at once, then the requests back to back, one at
 *   a time, in turn, until
 * - `{"cmd":"stop"}`: once the request under way has its answer,
 *   `{"sent":[[name, status, ms], ...]}` for the requests since `start`.
 */
import { readFile } from 'node:fs/promises'
import { Agent } from 'node:https'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { type FuzzRequest, worstInputs } from '../fuzz/worst-inputs.js'
import { call, ordinaryInputs } from './hostile-daemon.js'

export type SenderSet = 'worst' | 'ordinary'
/** One request sent under attack: its input's name, the answer's status (0: the connection closed) and its time (ms). */
export type SentRequest = [name: string, status: number, ms: number]

const [portText, certDir, set] = process.argv.slice(2)
const port = Number(portText)
const inputs: Array<{ name: string; request: FuzzRequest }> = set === 'ordinary' ? ordinaryInputs() : worstInputs()
const [ca, cert, key] = await Promise.all(['ca.crt', 'admin.crt', 'admin.key'].map((f) => readFile(join(certDir!, f), 'utf8')))
const agent = new Agent({ keepAlive: true, maxSockets: 1, ca, cert, key })

let attack: Promise<SentRequest[]> | undefined
let attacking = false
let next = 0

async function sendBackToBack(): Promise<SentRequest[]> {
  const sent: SentRequest[] = []
  while (attacking) {
    const { name, request } = inputs[next++ % inputs.length]!
    const t0 = performance.now()
    const status = await call(agent, port, request)
    sent.push([name, status, performance.now() - t0])
  }
  return sent
}

const answer = (value: unknown): void => void process.stdout.write(`${JSON.stringify(value)}\n`)

for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line) as { cmd: 'warm'; passes: number } | { cmd: 'start' } | { cmd: 'stop' }
  if (command.cmd === 'warm') {
    for (let pass = 0; pass < command.passes; pass++) for (const { request } of inputs) await call(agent, port, request)
    answer({})
  } else if (command.cmd === 'start') {
    attacking = true
    attack = sendBackToBack()
    answer({})
  } else {
    attacking = false
    answer({ sent: (await attack) ?? [] })
  }
}
agent.destroy()
