/**
 * The log directory `/logs/` serves (`--enable-logs-handler`): /var/log, as
 * upstream. Read-only, and nothing outside it: a link that resolves
 * elsewhere is treated as absent.
 */
import { createReadStream } from 'node:fs'
import { readdir, realpath, stat } from 'node:fs/promises'
import { join, sep } from 'node:path'
import { Readable } from 'node:stream'
import type { LogFileEntry, LogFiles } from '../../../core/ports.js'

export const DEFAULT_LOG_DIR = '/var/log'

export function nodeLogFiles(root: string = DEFAULT_LOG_DIR): LogFiles {
  return {
    async read(path: string): Promise<LogFileEntry | undefined> {
      try {
        const base = await realpath(root)
        const real = await realpath(join(base, path))
        if (real !== base && !real.startsWith(base + sep)) return undefined
        const info = await stat(real)
        if (info.isDirectory()) {
          const entries = await readdir(real, { withFileTypes: true })
          return { kind: 'directory', entries: entries.map((e) => (e.isDirectory() ? `${e.name}/` : e.name)).sort() }
        }
        if (!info.isFile()) return undefined
        // The answer's length is the size now, as a file server's: what is written after is not sent
        // (a read of an empty file would take a byte, `end` being inclusive, past a Content-Length of 0).
        if (info.size === 0) return { kind: 'file', size: 0, body: new Blob([]).stream() }
        return { kind: 'file', size: info.size, body: Readable.toWeb(createReadStream(real, { end: info.size - 1 })) as ReadableStream<Uint8Array> }
      } catch {
        // Missing or unreadable: the same answer as for a path that does not exist.
        return undefined
      }
    },
  }
}
