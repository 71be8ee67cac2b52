/**
 * klog's verbosity (`-v` and `--vmodule`, spec: "Runtime, metrics, logging,
 * diagnostics"): a message logged at V(n) shows when n is at most the
 * verbosity in effect for its module. The global `-v` applies everywhere;
 * the first `--vmodule` pattern that matches the module can raise it there.
 *
 * Module names: the base name of the source file that logs, without its
 * extension (`httplog` for core/http/filters/httplog.ts), as klog names Go
 * files. Patterns are globs over that name: `*` any run of characters, `?`
 * any one character, everything else literal (no regular expression, so a
 * pattern costs time linear in the name).
 */
import type { Logger } from './logger.js'

export interface VModuleSetting {
  pattern: string
  verbosity: number
}

export interface Verbosity {
  /** `-v`: messages up to this level show everywhere. */
  v: number
  /** `--vmodule`, in the order given. */
  vmodule: readonly VModuleSetting[]
}

/** Whether `name` matches the glob `pattern` (`*` and `?`), without backtracking blow-up. */
export function globMatch(pattern: string, name: string): boolean {
  let p = 0
  let n = 0
  let starP = -1
  let starN = 0
  while (n < name.length) {
    if (p < pattern.length && (pattern[p] === '?' || (pattern[p] !== '*' && pattern[p] === name[n]))) {
      p++
      n++
    } else if (p < pattern.length && pattern[p] === '*') {
      starP = p++
      starN = n
    } else if (starP >= 0) {
      p = starP + 1
      n = ++starN
    } else {
      return false
    }
  }
  while (pattern[p] === '*') p++
  return p === pattern.length
}

/** The verbosity in effect for `module`: the first matching `--vmodule` pattern's, else `-v`. */
export function moduleVerbosity(verbosity: Verbosity, module: string): number {
  for (const setting of verbosity.vmodule) if (globMatch(setting.pattern, module)) return setting.verbosity
  return verbosity.v
}

/**
 * klog's V(level).Enabled() for a module. As in klog, `-v` counts
 * everywhere and a matching `--vmodule` pattern can only show more there.
 */
export function verbosityEnabled(verbosity: Verbosity, level: number, module: string): boolean {
  if (verbosity.v >= level) return true
  return verbosity.vmodule.length > 0 && moduleVerbosity(verbosity, module) >= level
}

/** The field that carries a message's verbosity to the runtime's log format (upstream's JSON `v`). */
export const VERBOSITY_FIELD = 'v'
/** The field that names the module a message comes from (the log format's caller). */
export const MODULE_FIELD = 'module'

export type LogFn = (fields: Record<string, unknown>, message: string) => void

/**
 * klog's `V(level)` for `module`: the info function to log with, or
 * undefined when that verbosity is off, so that callers build no fields for
 * a message nobody sees: `verbose(logger, 3, 'httplog')?.({...}, 'HTTP')`.
 * A logger that knows no verbosity shows V(0) only.
 */
export function verbose(logger: Logger, level: number, module: string): LogFn | undefined {
  if (!(logger.enabled ? logger.enabled(level, module) : level === 0)) return undefined
  return (fields, message) => logger.info({ ...fields, [VERBOSITY_FIELD]: level, [MODULE_FIELD]: module }, message)
}
