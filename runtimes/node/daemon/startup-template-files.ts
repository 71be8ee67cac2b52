/**
 * Start-up templates (core/embedding/startup-template.ts for the in-memory
 * store, core/storage/stored-startup-template.ts for etcd and the
 * embedded store) kept beside the script that made them, as its code cache
 * is: one file per key, named by a digest of it and of the script's size
 * and time, so that a script replaced in place does not read the templates
 * of the one before. A new build removes them with the code caches
 * (tools/bundle.ts).
 */
import { createHash } from 'node:crypto'
import { readFileSync, statSync } from 'node:fs'
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
      try {
        return readFileSync(fileOf(key), 'utf8')
      } catch {
        return undefined
      }
    },
    // What a server stores may be nobody else's to read (a test's seeded objects): readable by this user alone.
    write: (key, text) => replaceFileQuietly(fileOf(key), text, 0o600),
  }
}
