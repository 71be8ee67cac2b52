/**
 * The audit log backend (`--audit-log-*`): one line per event, JSON or
 * upstream's legacy text, appended to a file (or standard output for `-`),
 * rotated by size as upstream's lumberjack does: the full file is renamed
 * `<name>-<UTC time>.<ext>`, optionally gzipped, and old backups beyond
 * `maxBackups` or `maxAgeDays` are removed.
 */
import { createReadStream, createWriteStream } from 'node:fs'
import { mkdir, open, type FileHandle, readdir, rename, rm, stat } from 'node:fs/promises'
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
}

const MB = 1024 * 1024

/** lumberjack's backup time stamp: `2006-01-02T15-04-05.000`, in UTC. */
function backupStamp(at: Date): string {
  return at.toISOString().replace(/:/g, '-').replace(/Z$/, '')
}

export class AuditLogBackend implements AuditBackend {
  readonly name = 'log'
  readonly failRequestOnError: boolean
  private file: FileHandle | undefined
  private size = 0
  // Writes go one after another, so lines never interleave and rotation sees a quiet file.
  private queue: Promise<void> = Promise.resolve()

  constructor(private readonly options: AuditLogOptions) {
    this.failRequestOnError = options.strict
  }

  processEvents(events: readonly AuditEvent[]): Promise<void> {
    const text = events.map((ev) => `${this.options.format === 'legacy' ? legacyEventLine(ev) : JSON.stringify(ev)}\n`).join('')
    const written = this.queue.then(() => this.write(text))
    this.queue = written.catch(() => {})
    return written
  }

  async shutdown(): Promise<void> {
    await this.queue
    await this.file?.close()
    this.file = undefined
  }

  private async write(text: string): Promise<void> {
    if (this.options.path === '-') {
      process.stdout.write(text)
      return
    }
    const bytes = Buffer.byteLength(text)
    const limit = (this.options.maxSizeMB || 100) * MB
    if (!this.file) await this.openFile()
    if (this.size > 0 && this.size + bytes > limit) await this.rotate()
    await this.file!.write(text)
    this.size += bytes
  }

  private async openFile(): Promise<void> {
    await mkdir(dirname(this.options.path), { recursive: true })
    this.file = await open(this.options.path, 'a', 0o600)
    this.size = (await this.file.stat()).size
  }

  private async rotate(): Promise<void> {
    await this.file?.close()
    this.file = undefined
    const path = this.options.path
    const ext = extname(path)
    const backup = join(dirname(path), `${basename(path, ext)}-${backupStamp(new Date())}${ext}`)
    await rename(path, backup)
    await this.openFile()
    if (this.options.compress) {
      await pipeline(createReadStream(backup), (await import('node:zlib')).createGzip(), createWriteStream(`${backup}.gz`, { mode: 0o600 }))
      await rm(backup)
    }
    await this.prune()
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
