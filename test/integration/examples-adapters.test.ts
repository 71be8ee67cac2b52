/**
 * The network adapters of wrangler-free-examples/ each answer a request, run
 * as their header comments say: `node:http` under Node, `Bun.serve` and an
 * `export default { fetch }` module under Bun, `Deno.serve` and the same
 * module under `deno serve`. Each prints `{ url, token }`; the test lists
 * namespaces with the token (200), and without it is refused (401). Bun and
 * Deno come from the dev dependencies; the package is the checkout's dist/
 * (`npm run build` first).
 */
import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { freePort } from '../e2e/daemon.js'

const ROOT = join(import.meta.dirname, '..', '..')
const BUN = join(ROOT, 'node_modules', '.bin', 'bun')
const DENO = join(ROOT, 'node_modules', '.bin', 'deno')
/** Deno reads npm packages from this checkout's node_modules, offline. */
const DENO_FLAGS = ['--node-modules-dir=manual', '--allow-net', '--allow-env', '--allow-read']
const example = (file: string): string => join(ROOT, 'wrangler-free-examples', file)
const TOKEN = 'example-adapter-token'
/** How long an adapter may take to print its address and answer. */
const WITHIN_MS = 45_000

/** Resolves with the first JSON line the child prints; rejects when it exits first or the time is up. */
function printedAddress(child: ChildProcess, output: string[]): Promise<{ url: string; token: string }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no address printed within ${WITHIN_MS} ms:\n${output.join('')}`)), WITHIN_MS)
    child.stdout!.on('data', (chunk: Buffer) => {
      output.push(chunk.toString())
      const line = output.join('').split('\n').find((l) => l.startsWith('{'))
      if (line) {
        clearTimeout(timer)
        resolve(JSON.parse(line) as { url: string; token: string })
      }
    })
    child.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()))
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`exited with ${code} before printing its address:\n${output.join('')}`))
    })
  })
}

/** GET with retries while the port is not listening yet (a module served by its runtime prints before it listens). */
async function getWithRetry(url: string, headers: Record<string, string>): Promise<Response> {
  const deadline = Date.now() + WITHIN_MS
  for (;;) {
    try {
      return await fetch(url, { headers, signal: AbortSignal.timeout(WITHIN_MS) })
    } catch (err) {
      if (Date.now() > deadline) throw err
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
}

async function answers(command: string, args: (port: number) => string[]): Promise<void> {
  const port = await freePort()
  const child = spawn(command, args(port), { cwd: ROOT, env: { ...process.env, PORT: String(port), APISERVER_TOKEN: TOKEN }, stdio: ['ignore', 'pipe', 'pipe'] })
  const output: string[] = []
  try {
    const { url, token } = await printedAddress(child, output)
    assert.equal(url, `http://127.0.0.1:${port}`)
    assert.equal(token, TOKEN)
    const listed = await getWithRetry(`${url}/api/v1/namespaces`, { authorization: `Bearer ${token}` })
    const body = await listed.text()
    assert.equal(listed.status, 200, `${body}\n${output.join('')}`)
    const names = (JSON.parse(body) as { items: { metadata: { name: string } }[] }).items.map((i) => i.metadata.name)
    assert.ok(names.includes('default'), names.join(','))
    const refused = await fetch(`${url}/api/v1/namespaces`)
    await refused.body?.cancel()
    assert.equal(refused.status, 401, 'a request without the token comes from the network and is not the admin')
  } finally {
    child.kill('SIGKILL')
  }
}

describe('wrangler-free-examples adapters answer a request', () => {
  it('node-http.ts under Node', () => answers(process.execPath, () => ['--import', 'tsx', example('node-http.ts')]))
  it('bun-serve.ts under Bun', () => answers(BUN, () => [example('bun-serve.ts')]))
  it('export-default-fetch.ts served by Bun', () => answers(BUN, () => [example('export-default-fetch.ts')]))
  it('deno-serve.ts under Deno', () => answers(DENO, () => ['run', ...DENO_FLAGS, example('deno-serve.ts')]))
  it('export-default-fetch.ts under deno serve', () =>
    answers(DENO, (port) => ['serve', ...DENO_FLAGS, '--host', '127.0.0.1', '--port', String(port), example('export-default-fetch.ts')]))
})
