/**
 * The reload rule upstream applies to the files it re-reads while running
 * (`--authentication-config`, `--encryption-provider-config` with automatic
 * reload): the file is polled (modification time, size and inode, which also
 * sees a file replaced by a rename, as editors and ConfigMap mounts do); a
 * changed text is handed to `apply`, and whatever cannot be read or applied is
 * logged while the configuration in effect stays.
 */
import { readFileSync, type Stats, unwatchFile, watchFile } from 'node:fs'
import type { Logger } from '../../../core/logging/logger.js'

/** How often the file is looked at. */
const POLL_INTERVAL_MS = 1000

export interface ReloadOutcome {
  ok: boolean
  error?: string
}

export interface ConfigFileWatch {
  path: string
  /** The flag that names the file, for the log lines. */
  flag: string
  /** Loads and puts the new text into effect; throws to keep the old configuration. */
  apply(text: string): Promise<void>
  /** Hears every attempt to apply a changed text. */
  onReload?(outcome: ReloadOutcome): void
}

/** Starts watching; returns the function that stops. Changes are applied one at a time, in order. */
export function watchConfigFile(watch: ConfigFileWatch, logger: Logger): () => void {
  const { path, flag } = watch
  let last = readFileSync(path, 'utf8')
  let pending = Promise.resolve()
  const reload = async (): Promise<void> => {
    let text: string
    try {
      text = readFileSync(path, 'utf8')
    } catch (err) {
      logger.error({ file: path, err: (err as Error).message }, `reloading ${flag} failed: the file cannot be read; keeping the configuration in effect`)
      return
    }
    if (text === last) return
    last = text
    try {
      await watch.apply(text)
      logger.info({ file: path }, `reloaded ${flag}`)
      watch.onReload?.({ ok: true })
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err)
      logger.error({ file: path, err: message }, `reloading ${flag} failed; keeping the configuration in effect`)
      watch.onReload?.({ ok: false, error: message })
    }
  }
  const onChange = (current: Stats, previous: Stats): void => {
    if (current.mtimeMs !== previous.mtimeMs || current.size !== previous.size || current.ino !== previous.ino) pending = pending.then(reload)
  }
  watchFile(path, { interval: POLL_INTERVAL_MS, persistent: false }, onChange)
  return () => unwatchFile(path, onChange)
}
