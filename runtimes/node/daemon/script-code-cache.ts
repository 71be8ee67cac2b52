/**
 * Runs a CommonJS bundle as a classic script with a V8 code cache beside it.
 *
 * V8 parses and compiles the daemon's 3.6 MB of JavaScript before anything
 * runs, at every start; Node 20 keeps no compile cache for modules. A
 * classic script can be given the code V8 made the last time
 * (`vm.Script` `cachedData`): the first start writes it, once the server
 * listens, so it holds every function start-up ran; later starts skip most
 * of the compiling. V8 checks the cache against the source, its own version
 * and its flags and rejects one that does not match: then the script
 * compiles as without one, and a new cache is written. A cache that cannot
 * be written (a read-only install) is simply not kept.
 *
 * The file is a CommonJS bundle wrapped in a function expression
 * (SCRIPT_WRAPPER_START / _END, which tools/bundle.ts puts around it): run,
 * it gives the function, which is called with CommonJS's five names and
 * `__scriptFileUrl`, its own file URL, which the bundle reads for
 * `import.meta.url`. The wrapper starts on the bundle's first line, so stack
 * traces keep its line numbers.
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname } from 'node:path'
import { pathToFileURL } from 'node:url'
import { constants, Script } from 'node:vm'

export interface CachedScript<T> {
  exports: T
  /** Whether V8 took compiled code from the cache beside the script (false: none there, or rejected). */
  usedCache: boolean
  /**
   * Takes V8's code for what has run so far, when the script had no usable
   * cache or `always`; keep it with saveCodeCache. V8 checks a cache against
   * its flags: call while they are as the next start will set them.
   */
  takeCodeCache(always?: boolean): void
  /** Writes what takeCodeCache took; never throws. */
  saveCodeCache(): void
}

export const SCRIPT_WRAPPER_START = '(function (exports, require, module, __filename, __dirname, __scriptFileUrl) {'
export const SCRIPT_WRAPPER_END = '})'

/** The file beside the script that holds its cache. */
export const codeCacheFileOf = (file: string): string => `${file}.v8-cache`

function readOrUndefined(file: string, encoding?: BufferEncoding): Buffer | string | undefined {
  try {
    return encoding ? readFileSync(file, encoding) : readFileSync(file)
  } catch {
    return undefined
  }
}

/**
 * Gives `bytes`' memory back at once. V8 has taken what it needs from the
 * cache by the time the script is compiled; left to the garbage collector,
 * its 3 MB stay resident until a full collection, long after the first
 * `/readyz`. Transferring the buffer (to a clone nobody keeps) detaches it
 * here, and the clone is young garbage that the next scavenge frees. Only a
 * buffer of its own: one cut from Node's shared pool is left alone.
 */
function freeNow(bytes: Buffer): void {
  const whole = bytes.buffer
  if (!(whole instanceof ArrayBuffer) || bytes.byteOffset !== 0 || whole.byteLength !== bytes.byteLength) return
  structuredClone(undefined, { transfer: [whole] })
}

/** How the script's evaluation is run: by default, as it is. */
export type Evaluation = <R>(evaluate: () => R) => R

const asItIs: Evaluation = (evaluate) => evaluate()

/**
 * Runs the CommonJS file `file` (undefined when it is not there); its exports and its code cache.
 * `evaluatedBy` wraps the evaluation alone, after the compile that checked the cache against V8's flags.
 */
export function runWithCodeCache<T>(file: string, evaluatedBy: Evaluation = asItIs): CachedScript<T> | undefined {
  const source = readOrUndefined(file, 'utf8') as string | undefined
  if (source === undefined) return undefined
  const cacheFile = codeCacheFileOf(file)
  const cachedData = readOrUndefined(cacheFile) as Buffer | undefined
  const script = new Script(source, {
    filename: file,
    ...(cachedData ? { cachedData } : {}),
    importModuleDynamically: constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  })
  if (cachedData) freeNow(cachedData)
  const module = { exports: {} as T }
  type Wrapper = (exports: T, require: NodeJS.Require, module: { exports: T }, filename: string, dirname: string, fileUrl: string) => void
  evaluatedBy(() => (script.runInThisContext() as Wrapper)(module.exports, createRequire(file), module, file, dirname(file), pathToFileURL(file).href))
  const stale = !cachedData || script.cachedDataRejected === true
  let taken: Buffer | undefined
  return {
    exports: module.exports,
    usedCache: !stale,
    takeCodeCache(always = false) {
      if ((stale || always) && !taken) taken = script.createCachedData()
    },
    saveCodeCache() {
      if (!taken) return
      const data = taken
      taken = undefined
      replaceFileQuietly(cacheFile, data)
    },
  }
}

/**
 * Writes `data` to `file` through a file of this process's own and a rename,
 * so that a process reading meanwhile finds the old contents or the new,
 * never half of them. A file that cannot be written is not: it never throws.
 */
export function replaceFileQuietly(file: string, data: string | Uint8Array, mode?: number): void {
  const partial = `${file}.${process.pid}`
  try {
    writeFileSync(partial, data, mode === undefined ? {} : { mode })
    renameSync(partial, file)
  } catch {
    rmSync(partial, { force: true })
  }
}
