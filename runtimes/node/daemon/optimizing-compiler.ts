/**
 * V8's compilers above its interpreter (Sparkplug's baseline code and
 * TurboFan's optimized code) while the daemon starts.
 *
 * Start-up runs many functions often enough for V8 to optimize them (the
 * decoding of stored objects, the RBAC reconciliation, the type tables'
 * walks), mostly once and never again. Those compilations run on V8's
 * worker threads, and their working memory stays resident in each thread's
 * allocator: some 6 MB at the first `/readyz`, for code the server does not
 * run afterwards. Holding TurboFan off until the server serves keeps that
 * out. Sparkplug's baseline code is the same story on a smaller scale for
 * every function that ran a little, most of all the etcd client's modules,
 * which load from source rather than from the code cache (some 3 MB at
 * ready on etcd). From the release on V8 compiles what requests run as it
 * always does (the functions start-up ran keep their feedback and are
 * compiled again when they are hot again).
 *
 * An operator's own choice of compiler flags (in NODE_OPTIONS or on the
 * command line) is left alone.
 */
import { setFlagsFromString } from 'node:v8'

const COMPILER_FLAGS = /--(no-)?(opt|turbofan|sparkplug|always-sparkplug|jitless|always-turbofan|always-opt|max-opt)\b/

const operatorChoseCompiler = (): boolean => [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((arg) => COMPILER_FLAGS.test(arg))

/** V8's defaults for this Node (`node --v8-options`), restored at the release. */
const HELD_COMPILERS = ['turbofan', 'sparkplug']

/** Turns Sparkplug and TurboFan off; the function returned turns them on again. */
export function optimizingCompilerHeldUntilListening(): () => void {
  if (operatorChoseCompiler()) return () => {}
  for (const compiler of HELD_COMPILERS) setFlagsFromString(`--no-${compiler}`)
  let released = false
  return () => {
    if (released) return
    released = true
    for (const compiler of HELD_COMPILERS) setFlagsFromString(`--${compiler}`)
  }
}
