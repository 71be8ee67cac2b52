/**
 * The primary's side of the audit log that the workers of `--workers` all
 * append to (`--audit-log-path`). A worker whose lines have filled the file
 * asks for a rotation; the primary, one rotation at a time, renames the
 * file (unless another worker's request already had it renamed), tells
 * every worker to reopen the path, and only once each has (or has exited)
 * compresses the renamed file and removes old backups, as lumberjack does
 * in a single process. Until then a worker may still be writing into the
 * renamed file, and compressing it early would lose those lines.
 */
import { renameSync, statSync } from 'node:fs'
import type { Logger } from '../../../core/logging/logger.js'
import type { ParsedFlags } from '../../../core/options/flags/index.js'
import { backupPath, compressAndPrune, type HousekeepingOptions } from './audit-log.js'

export class SharedAuditLogRotation {
  private rotations: Promise<void> = Promise.resolve()

  constructor(
    private readonly options: HousekeepingOptions,
    private readonly logger: Logger,
  ) {}

  /** A worker asks for the file of `inode` to be rotated. */
  request(inode: number, reopenAll: () => Promise<void>): void {
    this.rotations = this.rotations
      .then(() => this.rotate(inode, reopenAll))
      .catch((err: unknown) => this.logger.warn({ err: String(err), path: this.options.path }, 'cannot rotate the audit log'))
  }

  /** Resolves once the rotations asked for so far are done, their files compressed. */
  settled(): Promise<void> {
    return this.rotations
  }

  private async rotate(inode: number, reopenAll: () => Promise<void>): Promise<void> {
    const { path } = this.options
    let current: number
    try {
      current = statSync(path).ino
    } catch {
      return
    }
    // Another worker's request for the same file came first: the file there now is a new one.
    if (current !== inode) return
    const backup = backupPath(path, new Date())
    renameSync(path, backup)
    await reopenAll()
    await compressAndPrune(backup, this.options)
  }
}

/** The rotation of the shared audit log, when the flags give a file (not standard output). */
export function sharedAuditLogRotation(values: ParsedFlags['values'], logger: Logger): SharedAuditLogRotation | undefined {
  const path = values['audit-log-path']
  if (!path || path === '-') return undefined
  return new SharedAuditLogRotation(
    { path, compress: values['audit-log-compress'], maxBackups: values['audit-log-maxbackup'], maxAgeDays: values['audit-log-maxage'] },
    logger,
  )
}
