/**
 * The package's entry points under Node (the `node` condition of `.` and
 * `./node` in package.json): the same exports as the ES module build, taken
 * from a classic-script bundle of both run with a V8 code cache.
 *
 * Node 20 keeps no compile cache for ES modules, so every process that
 * imports the package parses and compiles its code again, and compiles
 * each function again the first time it runs: for a test file's process,
 * most of `import` and of the first server's start. The first process
 * writes V8's code for what it ran beside the script (takeCacheOnce, below);
 * later processes take it from there (script-code-cache.ts says when V8 refuses a
 * cache, and what happens then). The files dist/runtimes/node/library-core.js
 * and library-node.js, which re-export `library.core` and what `library.node()`
 * gives name by name, are written by tools/bundle.ts from the build's own list of
 * each entry point's exports.
 *
 * The ES module build is imported instead where the script cannot stand in
 * for it: when the script is not beside this file (a bundler moved this
 * module), under Deno (which reads the `node` condition too), and inside a
 * VM context of its own (jest's test environments): the script would run
 * in Node's main context, and its objects (arrays, errors, promises) would
 * not be those of the code that imported it.
 */
import { existsSync, rmSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Script } from 'node:vm'
import { codeCacheFileOf, runWithCodeCache } from './daemon/script-code-cache.js'
import { startupTemplatesBeside } from './daemon/startup-template-files.js'

export interface Library {
  core: typeof import('../../core/index.js')
  /** `./node`'s exports, its own modules evaluated at the first call. */
  node: () => Promise<typeof import('./index.js')>
}

/** Whether this module runs in Node's main context, where the script runs. */
function inMainContext(): boolean {
  try {
    return new Script('globalThis').runInThisContext() === globalThis
  } catch {
    return false
  }
}

const nodeItself = !('Deno' in globalThis) && !('Bun' in globalThis)

const scriptFile = fileURLToPath(new URL('./library-script.cjs', import.meta.url))
/** Beside the cache, while the cache holds code for `./node` too (written by a process that imported it). */
const COVERS_NODE = `${codeCacheFileOf(scriptFile)}.node`

const script = nodeItself && inMainContext() ? runWithCodeCache<Library>(scriptFile) : undefined
const cacheCoversNode = script?.usedCache === true && existsSync(COVERS_NODE)
let nodeLoaded = false
let cacheTaken = false

/**
 * Writes the cache once, when the process had none it could use, or had
 * one without `./node`'s code and imported `./node`: at the first shutdown
 * of a server or at exit, whichever comes first. By then it holds what the
 * process ran, a server's start-up and answers among it. Not at exit alone:
 * test runners (vitest's workers) end their processes without an exit event.
 */
function takeCacheOnce(): void {
  if (!script || cacheTaken) return
  cacheTaken = true
  if (script.usedCache && (cacheCoversNode || !nodeLoaded)) return
  script.takeCodeCache(true)
  script.saveCodeCache()
  try {
    if (nodeLoaded) writeFileSync(COVERS_NODE, '')
    else rmSync(COVERS_NODE, { force: true })
  } catch {
    // A read-only install: no cache was kept either.
  }
}

/** Each test file's process begins its first server from what an earlier one's start-up stored, kept beside the script. */
const startupTemplates = startupTemplatesBeside(scriptFile)

/**
 * `createApiServer` with the start-up templates beside the script (unless the embedder gave its own), each
 * server's `shutdown` taking the cache once it has shut down.
 */
function cacheTakenAtShutdown(create: Library['core']['createApiServer']): Library['core']['createApiServer'] {
  return (options, ports) => {
    const server = create(options, { startupTemplates, ...ports })
    const shutdown = server.shutdown.bind(server)
    server.shutdown = async () => {
      try {
        await shutdown()
      } finally {
        takeCacheOnce()
      }
    }
    return server
  }
}

if (script) process.once('exit', takeCacheOnce)

export const library: Library = script
  ? {
      core: { ...script.exports.core, createApiServer: cacheTakenAtShutdown(script.exports.core.createApiServer) },
      node: () => {
        nodeLoaded = true
        return script.exports.node()
      },
    }
  : { core: await import('../../core/index.js'), node: () => import('./index.js') }
