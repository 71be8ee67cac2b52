/**
 * The daemon's logger (spec: "Runtime, metrics, logging, diagnostics"):
 * pino underneath, upstream's flags on top. `-v`/`--vmodule` decide which
 * V(n) messages show (core/logging/verbosity.ts); `--logging-format` picks
 * klog's text (the default, as upstream) or upstream's JSON; with the
 * LoggingAlphaOptions gate, `--log-text-split-stream` sends errors to
 * standard error and the rest to standard output, buffered up to
 * `--log-text-info-buffer-size` and flushed at least every
 * `--log-flush-frequency`. Unbuffered output is written synchronously, so
 * nothing waits for a flush.
 */
import { writeSync } from 'node:fs'
import { type DestinationStream, type Logger as Pino, pino } from 'pino'
import type { Logger } from '../../../core/logging/logger.js'
import type { LogFiles } from '../../../core/ports.js'
import { DEFAULT_LOG_DIR, nodeLogFiles } from './log-files.js'
import type { FlagValues } from '../../../core/options/flags/index.js'
import { MODULE_FIELD, type Verbosity, VERBOSITY_FIELD, verbosityEnabled } from '../../../core/logging/verbosity.js'
import { jsonFields, klogLine, PINO_ERROR, type PinoRecord } from './log-formats.js'

export interface LoggingOptions {
  format: 'text' | 'json'
  verbosity: Verbosity
  flushFrequencyMs: number
  /** Text only: errors to standard error, the rest to standard output. */
  splitStream: boolean
  /** With the split stream: bytes of info lines held before writing; 0 writes each at once. */
  infoBufferSize: number
}

/** The logging flags, already checked by the flag rules (format, alpha gate). */
export function loggingOptions(values: FlagValues): LoggingOptions {
  return {
    format: values['logging-format'] === 'json' ? 'json' : 'text',
    verbosity: { v: values.v, vmodule: values.vmodule },
    flushFrequencyMs: values['log-flush-frequency'],
    splitStream: values['log-text-split-stream'],
    infoBufferSize: values['log-text-info-buffer-size'],
  }
}

export interface DaemonLogger {
  logger: Logger
  /** Writes what is buffered and stops the flush timer. */
  close(): void
}

/** Where lines go: a file descriptor, written synchronously. */
export interface LogOutputs {
  stdoutFd: number
  stderrFd: number
}

/** What a descriptor that takes no more for now (a full pipe) may have waiting; past it, lines are dropped and counted. */
const MAX_WAITING_BYTES = 8 * 1024 * 1024
/** How soon a descriptor that took no more is tried again. */
const RETRY_MS = 20

/**
 * Lines to a descriptor, held up to `size` bytes and flushed at least every
 * `everyMs`. A write the descriptor cannot take now (a pipe whose reader
 * is slow answers EAGAIN, or takes part) waits and is tried again, as Go's
 * blocking write would wait, without holding the thread: a flood of
 * warnings behind a slow reader had the write throw and end the process.
 * A descriptor that fails otherwise (its reader gone) loses the lines.
 */
class BufferedFd {
  private pending: string[] = []
  private bytes = 0
  private readonly timer: ReturnType<typeof setInterval> | undefined
  private waiting: Buffer[] = []
  private waitingBytes = 0
  private dropped = 0
  private retry: ReturnType<typeof setTimeout> | undefined
  constructor(
    private readonly fd: number,
    private readonly size: number,
    everyMs: number,
  ) {
    if (size > 0) this.timer = setInterval(() => this.flush(), Math.max(everyMs, 1)).unref()
  }

  write(line: string): void {
    if (this.size <= 0) return this.send(line)
    this.pending.push(line)
    this.bytes += Buffer.byteLength(line)
    if (this.bytes >= this.size) this.flush()
  }

  flush(): void {
    if (this.pending.length === 0) return
    const text = this.pending.join('')
    this.pending = []
    this.bytes = 0
    this.send(text)
  }

  close(): void {
    clearInterval(this.timer)
    this.flush()
    clearTimeout(this.retry)
    this.retry = undefined
    this.sendWaiting()
  }

  private send(text: string): void {
    const bytes = Buffer.from(text)
    // Behind lines already waiting: the order is kept.
    if (this.waitingBytes > 0) return this.wait(bytes)
    const written = this.writeNow(bytes)
    if (written < bytes.length) this.wait(bytes.subarray(written))
  }

  /** As many bytes as the descriptor takes now. */
  private writeNow(bytes: Buffer): number {
    let at = 0
    while (at < bytes.length) {
      try {
        at += writeSync(this.fd, bytes, at)
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EAGAIN') return at
        return bytes.length
      }
    }
    return at
  }

  private wait(bytes: Buffer): void {
    if (this.waitingBytes + bytes.length > MAX_WAITING_BYTES) this.dropped += bytes.length
    else {
      this.waiting.push(bytes)
      this.waitingBytes += bytes.length
    }
    this.retry ??= setTimeout(() => {
      this.retry = undefined
      this.sendWaiting()
    }, RETRY_MS).unref()
  }

  private sendWaiting(): void {
    if (this.waitingBytes === 0) return
    const all = Buffer.concat(this.waiting)
    this.waiting = []
    this.waitingBytes = 0
    const written = this.writeNow(all)
    if (written < all.length) return this.wait(all.subarray(written))
    if (this.dropped > 0) {
      const note = `${this.dropped} bytes of log lines dropped: the log's reader did not keep up\n`
      this.dropped = 0
      this.send(note)
    }
  }
}

/** pino's JSON records turned into klog text lines, errors split off when asked. */
function textDestination(options: LoggingOptions, outputs: LogOutputs): DestinationStream & { close(): void } {
  const errors = new BufferedFd(outputs.stderrFd, 0, options.flushFrequencyMs)
  const infos = options.splitStream ? new BufferedFd(outputs.stdoutFd, options.infoBufferSize, options.flushFrequencyMs) : errors
  return {
    write(json: string) {
      const record = JSON.parse(json) as PinoRecord
      const line = klogLine(record, process.pid)
      if (options.splitStream && record.level < PINO_ERROR) infos.write(line)
      else errors.write(line)
    },
    close() {
      infos.close()
      errors.close()
    },
  }
}

/** upstream's JSON: `ts` in fractional epoch milliseconds, no level key. */
function jsonPino(outputs: LogOutputs): Pino {
  return pino(
    {
      base: null,
      messageKey: 'msg',
      // With no level key pino writes the timestamp first, so it takes no leading comma.
      timestamp: () => `"ts":${performance.timeOrigin + performance.now()}`,
      formatters: { level: () => ({}) },
    },
    pino.destination({ fd: outputs.stderrFd, sync: true }),
  )
}

/** Core's Logger over pino: verbosity decided here, `debug` being klog's V(4). */
function verbosityLogger(out: Pino, initial: Verbosity, shape: (fields: Record<string, unknown>, error: boolean) => Record<string, unknown>): Logger {
  // A copy: `-v` changes at run time through /debug/flags/v, the options given stay as they were.
  const verbosity = { v: initial.v, vmodule: initial.vmodule }
  const enabled = (level: number, module: string): boolean => verbosityEnabled(verbosity, level, module)
  return {
    enabled,
    setVerbosity(level) {
      verbosity.v = level
    },
    debug(fields, message) {
      const module = typeof fields[MODULE_FIELD] === 'string' ? fields[MODULE_FIELD] : ''
      if (enabled(4, module)) out.info(shape({ ...fields, [VERBOSITY_FIELD]: 4 }, false), message)
    },
    info: (fields, message) => out.info(shape(fields, false), message),
    warn: (fields, message) => out.warn(shape(fields, false), message),
    error: (fields, message) => out.error(shape(fields, true), message),
  }
}

/**
 * The daemon's logger. `logStream` (embedders and tests) receives pino's
 * own JSON lines whatever the format, as it always has.
 */
export function daemonLogger(options: LoggingOptions, logStream: DestinationStream | undefined, outputs: LogOutputs = { stdoutFd: 1, stderrFd: 2 }): DaemonLogger {
  const asIs = (fields: Record<string, unknown>): Record<string, unknown> => fields
  if (logStream) {
    return { logger: verbosityLogger(pino({ base: null, timestamp: pino.stdTimeFunctions.isoTime }, logStream), options.verbosity, asIs), close() {} }
  }
  if (options.format === 'json') return { logger: verbosityLogger(jsonPino(outputs), options.verbosity, jsonFields), close() {} }
  const destination = textDestination(options, outputs)
  const out = pino({ base: null, timestamp: pino.stdTimeFunctions.epochTime }, destination)
  // Buffered info lines still reach the output when the process exits another way (a second signal).
  const onExit = (): void => destination.close()
  process.once('exit', onExit)
  return {
    logger: verbosityLogger(out, options.verbosity, asIs),
    close: () => {
      process.off('exit', onExit)
      destination.close()
    },
  }
}

/** The `/logs/` port when `--enable-logs-handler` is on. */
export function logsHandlerPort(values: FlagValues): { logFiles?: LogFiles } {
  return values['enable-logs-handler'] ? { logFiles: nodeLogFiles() } : {}
}

/** What the server answers besides the API, for the one start-up line that says where it serves. */
export function servedPaths(values: FlagValues): string {
  const paths = ['/api', '/apis', '/openapi/v2', '/openapi/v3', '/version', '/healthz', '/livez', '/readyz', '/metrics']
  if (values.profiling) paths.push('/debug/pprof/')
  if (values['enable-logs-handler']) paths.push(`/logs/ (${DEFAULT_LOG_DIR})`)
  return paths.join(', ')
}
