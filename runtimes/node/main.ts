#!/usr/bin/env node
/** The `apiserver` bin under Node. Everything lives in daemon/daemon.ts so tests can run it in-process. */
import { fileURLToPath } from 'node:url'
import { lowerBackgroundThreads } from './daemon/background-threads.js'
import type { runDaemon as RunDaemon } from './daemon/daemon.js'
import { KEPT_HELP_FILE, printKeptHelp } from './daemon/kept-help.js'
import type { nodeRuntime as NodeRuntime } from './daemon/node-runtime.js'
import { optimizingCompilerHeldUntilListening } from './daemon/optimizing-compiler.js'
import { runWithCodeCache } from './daemon/script-code-cache.js'
import { startupTemplatesBeside } from './daemon/startup-template-files.js'
import { loadStartupBuiltins } from './daemon/startup-builtins.js'
import { youngGenerationGrowingDuring, youngGenerationHeldUntilListening } from './daemon/young-generation.js'

interface DaemonScript {
  runDaemon: typeof RunDaemon
  nodeRuntime: typeof NodeRuntime
}

/** How long after listening the code cache of a first start is written: off the path of the first requests. */
const CODE_CACHE_WRITE_DELAY_MS = 3000

/** No top-level await: the build bundles this file as CommonJS too (main.cjs, the bins), which Node loads without its ES module loader. */
async function main(): Promise<void> {
  // Before the flags below: Node's own modules compile from their code cache only under V8's default flags.
  loadStartupBuiltins()
  // Set before the daemon's code loads: its evaluation is part of start-up.
  const releaseYoungGeneration = youngGenerationHeldUntilListening()
  const releaseOptimizingCompiler = optimizingCompilerHeldUntilListening()
  // The build's classic-script bundle of the daemon, run with a code cache; from source (no bundle), the modules.
  const scriptFile = fileURLToPath(new URL('./daemon-script.cjs', import.meta.url))
  // On etcd the script evaluates with the young generation free to grow (young-generation.ts says why).
  const onEtcd = process.argv.slice(2).some((arg) => /^--etcd-servers(=|$)/.test(arg))
  const script = runWithCodeCache<DaemonScript>(scriptFile, onEtcd ? youngGenerationGrowingDuring : undefined)

  /**
   * The code cache of a first start is taken when it is written, with the request paths its first requests ran,
   * so that later starts answer their first requests from cached code as well. V8 checks a cache against its
   * flags: the start-up flags are set again while the cache is taken.
   */
  let codeCacheSaved = false
  let listened = false
  const saveCodeCache = (): void => {
    // A start that ran from a usable cache keeps it as it is; one without writes it once (at the delay, or at exit).
    // Only a start that listened: `--version`, or a flag refused, runs a sliver of the code, and a cache of that
    // sliver, usable and so never written again, would leave every later start compiling the rest.
    if (!script || script.usedCache || codeCacheSaved || !listened) return
    codeCacheSaved = true
    const releaseYoungGenerationAgain = youngGenerationHeldUntilListening()
    const releaseOptimizingCompilerAgain = optimizingCompilerHeldUntilListening()
    script.takeCodeCache()
    releaseYoungGenerationAgain()
    releaseOptimizingCompilerAgain()
    script.saveCodeCache()
  }

  const { runDaemon, nodeRuntime }: DaemonScript = script?.exports ?? { ...(await import('./daemon/daemon.js')), ...(await import('./daemon/node-runtime.js')) }
  process.exitCode = await runDaemon(process.argv.slice(2), {
    runtime: nodeRuntime,
    // Kept beside the build's script, as its code cache; run from source, none.
    ...(script ? { startupTemplates: startupTemplatesBeside(scriptFile) } : {}),
    onListening: () => {
      listened = true
      releaseYoungGeneration()
      releaseOptimizingCompiler()
      // V8's and libuv's pools exist by now; the serving thread goes first when the cores are busy.
      lowerBackgroundThreads()
      setTimeout(saveCodeCache, CODE_CACHE_WRITE_DELAY_MS).unref()
    },
  })
  // A start that stopped before the delay above keeps its cache too.
  saveCodeCache()
  // Do not wait for stray handles (keep-alive timers, log streams): shutdown already finished its work.
  process.exit()
}

// envtest asks for the help before each start: printed from the build's file, without loading the daemon's code.
if (!printKeptHelp(process.argv.slice(2), fileURLToPath(new URL(`./${KEPT_HELP_FILE}`, import.meta.url)))) void main()
