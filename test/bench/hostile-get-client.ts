/**
 * The GET client of the daemon measurement in hostile-input.ts, in a
 * process of its own so that the hostile sender's work never delays it: one
 * keep-alive TLS connection with the admin client certificate, one GET at a
 * time. Reads commands from stdin, one JSON line each
 * (`{"total":1500,"maxSeconds":20}`), and answers each with a LoadResult on
 * one line of stdout. Started with the daemon's port and certificate
 * directory as arguments.
 */
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

for await (const line of createInterface({ input: process.stdin })) {
  const { total, maxSeconds } = JSON.parse(line) as { total: number; maxSeconds: number }
  const result = await runLoad({ total, concurrency: 1, maxSeconds }, get)
  process.stdout.write(`${JSON.stringify(result)}\n`)
}
agent.destroy()
