/**
 * The log sink every layer writes to (pino in the daemon): a pino-compatible
 * subset, structured fields first, then the message.
 */
export interface Logger {
  /** klog's V(4): details; a `module` field names the module `--vmodule` matches. */
  debug(fields: Record<string, unknown>, message: string): void
  info(fields: Record<string, unknown>, message: string): void
  warn(fields: Record<string, unknown>, message: string): void
  error(fields: Record<string, unknown>, message: string): void
  /**
   * klog's V(level).Enabled() for a module (core/logging/verbosity.ts names
   * them): whether messages at that verbosity show. Log them with
   * `verbose(logger, level, module)`. Absent: only V(0) shows.
   */
  enabled?(level: number, module: string): boolean
  /** Sets `-v` from now on (`PUT /debug/flags/v`); absent where the logger has no verbosity. */
  setVerbosity?(level: number): void
}

/** A logger that drops everything: the default where none is given. */
export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
}
