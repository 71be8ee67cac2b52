/**
 * Start-up templates (core/embedding/startup-template.ts for the in-memory
 * store, core/storage/stored-startup-template.ts for etcd and the
 * embedded store) kept beside the script that made them, as its code cache
 * is: one file per key, named by a digest of it and of the script's size
 * and time, so that a script replaced in place does not read the templates
 * of the one before. A new build removes them with the code caches
 * (tools/bundle.ts).
 *
 * A template's objects go to the store unchecked (a ClusterRoleBinding in
 * one would bind in every cluster started from it), so only a file this
 * user wrote and nobody else may write is read: owned by the process's
 * user, writable by neither its group nor others. Any other file is taken
 * for none, and the start bootstraps in full.
 */
import { createHash } from 'node:crypto'
import { closeSync, fstatSync, openSync, readFileSync, statSync } from 'node:fs'
import type { StartupTemplateFiles } from '../../../core/ports.js'
import { replaceFileQuietly } from './script-code-cache.js'

export function startupTemplatesBeside(scriptFile: string): StartupTemplateFiles {
  let build: string
  try {
    const { size, mtimeMs } = statSync(scriptFile)
    build = `${size} ${mtimeMs}`
  } catch {
    build = ''
  }
  const fileOf = (key: string): string => `${scriptFile}.startup-${createHash('sha256').update(build).update('\n').update(key).digest('hex').slice(0, 32)}.json`
  return {
    read(key) {
      let fd: number | undefined
      try {
        fd = openSync(fileOf(key), 'r')
        return writableByThisUserAlone(fstatSync(fd)) ? readFileSync(fd, 'utf8') : undefined
      } catch {
        return undefined
      } finally {
        if (fd !== undefined) closeSync(fd)
      }
    },
    // What a server stores may be nobody else's to read (a test's seeded objects): readable by this user alone.
    write: (key, text) => replaceFileQuietly(fileOf(key), text, 0o600),
  }
}

/** Owned by this process's user and writable by nobody else (where the platform has users: not on Windows). */
export function writableByThisUserAlone({ uid, mode }: { uid: number; mode: number }): boolean {
  if (typeof process.getuid !== 'function') return true
  return uid === process.getuid() && (mode & 0o022) === 0
}
