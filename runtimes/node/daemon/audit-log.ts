/**
 * The audit log backend (`--audit-log-*`): one line per event, JSON or
 * upstream's legacy text, appended to a file (or standard output for `-`),
 * rotated by size as upstream's lumberjack does: the full file is renamed
 * `<name>-<UTC time>.<ext>`, optionally gzipped, and old backups beyond
 * `maxBackups` or `maxAgeDays` are removed. Workers of `--workers` share the
 * file: the primary renames it for them all (audit-log-rotation.ts).
 */
import { closeSync, createReadStream, createWriteStream, existsSync, fstatSync, mkdirSync, openSync, renameSync, writeSync } from 'node:fs'
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
  /** Set in a worker of `--workers`: the file is shared, and the primary rotates it. */
  shared?: SharedRotation
}

/**
 * A worker's side of the rotation of a log file every worker appends to: a
 * worker cannot rename the file itself, since the others would go on
 * writing into the renamed one, and compressing it would lose their lines.
 */
export interface SharedRotation {
  /** Asks the primary to rotate the file, the one whose inode is given (a file rotated since is not rotated again). */
  request(inode: number): void
  /** `reopen` runs once the primary renamed the file; the primary compresses it once every worker's has run. */
  onRotated(reopen: () => void): void
}

/** With a shared file, the real size is read after this much of this worker's own writing: the others' lines count too. */
const SHARED_SIZE_CHECK_BYTES = 64 * 1024
/** A rotation asked for and not done by then (the primary busy or gone) is asked for again. */
const SHARED_REQUEST_AGAIN_MS = 5_000

const MB = 1024 * 1024

/** lumberjack's backup name: `<name>-2006-01-02T15-04-05.000<ext>`, the time in UTC. */
export function backupPath(path: string, at: Date): string {
  const ext = extname(path)
  return join(dirname(path), `${basename(path, ext)}-${at.toISOString().replace(/:/g, '-').replace(/Z$/, '')}${ext}`)
}

export type HousekeepingOptions = Pick<AuditLogOptions, 'path' | 'compress' | 'maxBackups' | 'maxAgeDays'>

/** What follows a rotation, as lumberjack does it: the backup gzipped, then backups beyond the count and age the flags allow removed. */
export async function compressAndPrune(backup: string, options: HousekeepingOptions): Promise<void> {
  if (options.compress) {
    await pipeline(createReadStream(backup), (await import('node:zlib')).createGzip(), createWriteStream(`${backup}.gz`, { mode: 0o600 }))
    await rm(backup)
  }
  await prune(options)
}

/** Removes backups beyond the count and age the flags allow, oldest first. */
async function prune({ path, maxBackups, maxAgeDays }: HousekeepingOptions): Promise<void> {
  if (!maxBackups && !maxAgeDays) return
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
  /** The open file's inode, which names it to the primary when the file is shared. */
  private inode = 0
  /** This worker's bytes written since the shared file's size was last read. */
  private unchecked = 0
  /** When this worker last asked for the shared file to be rotated; 0 once it was. */
  private rotationAskedAt = 0

  constructor(private readonly options: AuditLogOptions) {
    this.failRequestOnError = options.strict
    options.shared?.onRotated(() => this.reopen())
  }

  /**
   * Opens the file now, as upstream's ensureLogFile does when the options
   * are applied: a path the server cannot write stops start-up, where a
   * file opened at the first event would have dropped every event, each
   * request served meanwhile unaudited.
   */
  ensureLogFile(): void {
    if (this.options.path === '-' || this.fd !== undefined) return
    try {
      this.openFile()
    } catch (err) {
      throw new Error(`--audit-log-path: ensureLogFile: ${(err as Error).message}`)
    }
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
    if (this.options.shared) this.askForRotationIfFull(bytes.length, limit, this.options.shared)
    else if (this.size > 0 && this.size + bytes.length > limit) this.rotate()
    // A regular file takes a write whole; a short one (a full disk) is finished or fails with the error.
    for (let at = 0; at < bytes.length; ) at += writeSync(this.fd!, bytes, at)
    this.size += bytes.length
  }

  private openFile(): void {
    makeParents(dirname(this.options.path))
    this.fd = openSync(this.options.path, 'a', 0o600)
    const stats = fstatSync(this.fd)
    this.size = stats.size
    this.inode = stats.ino
    this.unchecked = 0
  }

  private rotate(): void {
    if (this.fd !== undefined) closeSync(this.fd)
    this.fd = undefined
    const backup = backupPath(this.options.path, new Date())
    renameSync(this.options.path, backup)
    this.openFile()
    this.housekeeping = this.housekeeping.then(() => compressAndPrune(backup, this.options)).catch((err: unknown) => this.options.onHousekeepingError?.(err as Error))
  }

  /**
   * A shared file past its size is rotated by the primary, which is asked
   * once (again only if nothing came of it): this line and those written
   * until the primary has renamed the file still go into it, so a file may
   * end a little past the size, as every worker's lines must land somewhere.
   */
  private askForRotationIfFull(adding: number, limit: number, shared: SharedRotation): void {
    this.unchecked += adding
    if (this.unchecked >= SHARED_SIZE_CHECK_BYTES) {
      this.size = fstatSync(this.fd!).size
      this.unchecked = 0
    }
    if (this.size === 0 || this.size + adding <= limit) return
    const now = Date.now()
    if (this.rotationAskedAt !== 0 && now - this.rotationAskedAt < SHARED_REQUEST_AGAIN_MS) return
    this.rotationAskedAt = now
    shared.request(this.inode)
  }

  /** The primary renamed the shared file: later lines go into the new one. */
  private reopen(): void {
    if (this.fd === undefined) return
    closeSync(this.fd)
    this.fd = undefined
    this.rotationAskedAt = 0
    this.openFile()
  }
}

/**
 * Makes the missing directories above the log, one at a time from the
 * first that exists. Node's recursive mkdir never returns for some paths
 * (under /proc it tried again for ever, holding the thread at the first
 * event); each level here is made once, or fails with its error.
 */
function makeParents(dir: string): void {
  const missing: string[] = []
  for (let at = dir; !existsSync(at); at = dirname(at)) {
    missing.push(at)
    if (dirname(at) === at) break
  }
  for (const level of missing.reverse()) mkdirSync(level)
}
