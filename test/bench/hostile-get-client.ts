/**
 * The GET client of the daemon measurement in hostile-input.ts, in a
 * process of its own so that the hostile sender's work never delays it: one
 * keep-alive TLS connection with the admin client certificate, one GET at a
 * time. Reads commands from stdin, one JSON line each
 * (`{"total":1500,"maxSeconds":20}`), and answers each with a LoadResult on
 * one line of stdout. Started with the daemon's port and certificate
 * directory as arguments. With `"samples":true` the answer also lists each
 * GET as [sent at, latency] in ms, sent at on the clock every process on the
 * machine shares (`performance.timeOrigin + performance.now()`), so that the
 * hostile sender can say what it was sending when a GET was slow; on Linux a
 * third figure, how long this client itself waited for a core during the GET
 * (its thread's run-queue time in /proc/thread-self/schedstat), tells a GET
 * the server kept waiting from one whose client was not running.
 */
import { readFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { Agent, request } from 'node:https'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { runLoad } from './load.js'

const [portText, certDir, path] = process.argv.slice(2)
const port = Number(portText)
const [ca, cert, key] = await Promise.all(['ca.crt', 'admin.crt', 'admin.key'].map((f) => readFile(join(certDir!, f), 'utf8')))
const agent = new Agent({ keepAlive: true, maxSockets: 1, ca, cert, key })

function get(): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent, headers: { accept: 'application/json' } }, (res) => {
      res.resume()
      res.once('end', () => resolve(res.statusCode === 200))
      res.once('error', reject)
    })
    req.once('error', reject)
    req.end()
  })
}

/** This thread's time waiting for a core so far (ms), where the kernel tells it. */
function waitedForCore(): number | undefined {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[1]) / 1e6
  } catch {
    return undefined
  }
}

for await (const line of createInterface({ input: process.stdin })) {
  const { total, maxSeconds, samples } = JSON.parse(line) as { total: number; maxSeconds: number; samples?: boolean }
  const sent: Array<[number, number] | [number, number, number]> = []
  const result = await runLoad({ total, concurrency: 1, maxSeconds }, async () => {
    const at = performance.timeOrigin + performance.now()
    const waitedBefore = samples ? waitedForCore() : undefined
    try {
      return await get()
    } finally {
      if (samples) {
        const latency = performance.timeOrigin + performance.now() - at
        const waitedAfter = waitedForCore()
        sent.push(waitedBefore === undefined || waitedAfter === undefined ? [at, latency] : [at, latency, waitedAfter - waitedBefore])
      }
    }
  })
  process.stdout.write(`${JSON.stringify(samples ? { ...result, samples: sent } : result)}\n`)
}
agent.destroy()
