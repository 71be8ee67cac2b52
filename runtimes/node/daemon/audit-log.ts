/**
 * The audit log backend (`--audit-log-*`): one line per event, JSON or
 * upstream's legacy text, appended to a file (or standard output for `-`),
 * rotated by size as upstream's lumberjack does: the full file is renamed
 * `<name>-<UTC time>.<ext>`, optionally gzipped, and old backups beyond
 * `maxBackups` or `maxAgeDays` are removed.
 */
import { closeSync, createReadStream, createWriteStream, fstatSync, mkdirSync, openSync, renameSync, writeSync } from 'node:fs'
import { readdir, rm, stat } from 'node:fs/promises'
import { basename, dirname, extname, join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { legacyEventLine } from '../../../core/audit/event.js'
import type { AuditBackend, AuditEvent } from '../../../core/audit/types.js'

export interface AuditLogOptions {
  path: string
  format: 'json' | 'legacy'
  /** Megabytes before rotation; 0 means lumberjack's default of 100. */
  maxSizeMB: number
  /** Rotated files kept; 0 keeps them all. */
  maxBackups: number
  /** Days a rotated file is kept; 0 keeps them whatever their age. */
  maxAgeDays: number
  compress: boolean
  /** blocking-strict: a RequestReceived event that cannot be written fails its request. */
  strict: boolean
  /** Told of a rotated file that could not be compressed or a backup that could not be removed (no request fails of it). */
  onHousekeepingError?: (err: Error) => void
}

const MB = 1024 * 1024

/** lumberjack's backup time stamp: `2006-01-02T15-04-05.000`, in UTC. */
function backupStamp(at: Date): string {
  return at.toISOString().replace(/:/g, '-').replace(/Z$/, '')
}

/**
 * Events are written at once, by a system call of the serving thread, as
 * upstream's log backend writes them in the request's goroutine: a line
 * reaches the page cache in microseconds, where an asynchronous write
 * waited its turn in a queue and for a thread of libuv's pool and back
 * (some 0.15 ms a line, two lines a request under a Metadata policy in
 * blocking mode). Lines never interleave, and rotation sees a quiet file,
 * without a queue. Compressing and pruning rotated files, as lumberjack
 * does them, run in the background.
 */
export class AuditLogBackend implements AuditBackend {
  readonly name = 'log'
  readonly failRequestOnError: boolean
  private fd: number | undefined
  private size = 0
  private housekeeping: Promise<void> = Promise.resolve()

  constructor(private readonly options: AuditLogOptions) {
    this.failRequestOnError = options.strict
  }

  processEvents(events: readonly AuditEvent[]): Promise<void> {
    const text = events.map((ev) => `${this.options.format === 'legacy' ? legacyEventLine(ev) : JSON.stringify(ev)}\n`).join('')
    try {
      this.write(text)
      return Promise.resolve()
    } catch (err) {
      return Promise.reject(err as Error)
    }
  }

  async shutdown(): Promise<void> {
    await this.housekeeping
    if (this.fd !== undefined) closeSync(this.fd)
    this.fd = undefined
  }

  private write(text: string): void {
    if (this.options.path === '-') {
      process.stdout.write(text)
      return
    }
    const bytes = Buffer.from(text)
    const limit = (this.options.maxSizeMB || 100) * MB
    if (this.fd === undefined) this.openFile()
    if (this.size > 0 && this.size + bytes.length > limit) this.rotate()
    // A regular file takes a write whole; a short one (a full disk) is finished or fails with the error.
    for (let at = 0; at < bytes.length; ) at += writeSync(this.fd!, bytes, at)
    this.size += bytes.length
  }

  private openFile(): void {
    mkdirSync(dirname(this.options.path), { recursive: true })
    this.fd = openSync(this.options.path, 'a', 0o600)
    this.size = fstatSync(this.fd).size
  }

  private rotate(): void {
    if (this.fd !== undefined) closeSync(this.fd)
    this.fd = undefined
    const path = this.options.path
    const ext = extname(path)
    const backup = join(dirname(path), `${basename(path, ext)}-${backupStamp(new Date())}${ext}`)
    renameSync(path, backup)
    this.openFile()
    this.housekeeping = this.housekeeping
      .then(async () => {
        if (this.options.compress) {
          await pipeline(createReadStream(backup), (await import('node:zlib')).createGzip(), createWriteStream(`${backup}.gz`, { mode: 0o600 }))
          await rm(backup)
        }
        await this.prune()
      })
      .catch((err: unknown) => this.options.onHousekeepingError?.(err as Error))
  }

  /** Removes backups beyond the count and age the flags allow, oldest first. */
  private async prune(): Promise<void> {
    const { maxBackups, maxAgeDays } = this.options
    if (!maxBackups && !maxAgeDays) return
    const path = this.options.path
    const ext = extname(path)
    const prefix = `${basename(path, ext)}-`
    const dir = dirname(path)
    const backups = (await readdir(dir)).filter((name) => name.startsWith(prefix) && name !== basename(path)).sort().reverse()
    const cutoff = Date.now() - maxAgeDays * 24 * 3600 * 1000
    for (const [i, name] of backups.entries()) {
      const tooMany = maxBackups > 0 && i >= maxBackups
      const tooOld = maxAgeDays > 0 && (await stat(join(dir, name))).mtimeMs < cutoff
      if (tooMany || tooOld) await rm(join(dir, name), { force: true })
    }
  }
}
