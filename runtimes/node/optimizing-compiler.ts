/**
 * V8's optimizing compiler (TurboFan) while the daemon starts.
 *
 * Start-up runs many functions often enough for V8 to optimize them (the
 * decoding of stored objects, the RBAC reconciliation, the type tables'
 * walks), mostly once and never again. Those compilations run on V8's
 * worker threads, and their working memory stays resident in each thread's
 * allocator: some 6 MB at the first `/readyz`, for code the server does not
 * run afterwards. Holding TurboFan off until the server listens keeps that
 * out; from then on V8 optimizes what requests run as it always does (the
 * functions start-up ran keep their feedback and are optimized when they
 * are hot again).
 *
 * An operator's own choice of compiler flags (in NODE_OPTIONS or on the
 * command line) is left alone.
 */
import { setFlagsFromString } from 'node:v8'

const COMPILER_FLAGS = /--(no-)?(opt|turbofan|jitless|always-turbofan|always-opt|max-opt)\b/

const operatorChoseCompiler = (): boolean => [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((arg) => COMPILER_FLAGS.test(arg))

/** Turns TurboFan off; the function returned turns it on again. */
export function optimizingCompilerHeldUntilListening(): () => void {
  if (operatorChoseCompiler()) return () => {}
  setFlagsFromString('--no-turbofan')
  let released = false
  return () => {
    if (released) return
    released = true
    setFlagsFromString('--turbofan')
  }
}
