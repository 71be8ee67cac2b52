/**
 * V8's baseline and optimizing compilers held off while the daemon starts
 * (runtimes/node/daemon/optimizing-compiler.ts): off until released, on again
 * after, and an operator's own compiler flag left as given. Each case runs
 * in a fresh node, which reports what V8 says of a hot function.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, it } from 'node:test'

const MODULE = pathToFileURL(join(import.meta.dirname, '..', '..', '..', 'runtimes', 'node', 'daemon', 'optimizing-compiler.ts')).href

/** Runs `hot` until V8 reports it compiled (baseline or optimized) or the tries run out; prints whether it was, before and after the release. */
const PROBE = `
const { optimizingCompilerHeldUntilListening } = await import(${JSON.stringify(MODULE)})
const release = optimizingCompilerHeldUntilListening()
function hot(x) { let s = 0; for (let i = 0; i < 50; i++) s += (x * i) % 7; return s }
// V8's OptimizationStatus bits: TurboFan's code, Sparkplug's code.
const COMPILED = 64 | (1 << 15)
const optimizedAfterWork = async () => {
  for (let attempt = 0; attempt < 50; attempt++) {
    for (let i = 0; i < 20000; i++) hot(i)
    await new Promise((resolve) => setTimeout(resolve, 5))
    if (%GetOptimizationStatus(hot) & COMPILED) return true
  }
  return false
}
const held = await optimizedAfterWork()
release()
const released = await optimizedAfterWork()
process.stdout.write(JSON.stringify({ held, released }))
`

function probe(nodeFlags: string[] = []): Promise<{ held: boolean; released: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--allow-natives-syntax', ...nodeFlags, '--import', 'tsx', '--input-type=module', '-e', PROBE], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000)
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
    child.once('error', reject)
    child.once('exit', (code) => {
      clearTimeout(timer)
      try {
        resolve(JSON.parse(out) as { held: boolean; released: boolean })
      } catch {
        reject(new Error(`the probe exited ${code}: ${out}`))
      }
    })
  })
}

describe("V8's compilers while the daemon starts", () => {
  it('compiles nothing beyond bytecode until released, and hot code again after', async () => {
    assert.deepEqual(await probe(), { held: false, released: true })
  })

  it("leaves an operator's --no-opt and --no-sparkplug in force after the release", async () => {
    assert.deepEqual(await probe(['--no-opt', '--no-sparkplug']), { held: false, released: false })
  })

  it("leaves an operator's --turbofan in force during start-up", async () => {
    assert.deepEqual(await probe(['--turbofan']), { held: true, released: true })
  })
})
