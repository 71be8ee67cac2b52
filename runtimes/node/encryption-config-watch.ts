/**
 * `--encryption-provider-config-automatic-reload`: the file is polled (its
 * modification time, size and inode, which also sees a file replaced by a
 * rename, as ConfigMap mounts do); a changed file that loads and whose KMS
 * plugins answer replaces the encryption configuration for every key at
 * once; one that does not is logged and the configuration in effect stays.
 */
import { readFileSync, type Stats, unwatchFile, watchFile } from 'node:fs'
import { loadEncryptionConfiguration } from '../../core/config/encryption.js'
import type { EncryptionAtRest } from '../../core/encryption/encryption-at-rest.js'
import type { ParsedFlags } from '../../core/options/flags/index.js'
import type { Logger } from '../../core/ports.js'
import { encryptionLoadOptions } from './config-files.js'

/** How often the file is looked at. */
const POLL_INTERVAL_MS = 1000

export interface ReloadOutcome {
  ok: boolean
  error?: string
}

/** Starts watching; returns the function that stops. `onReload` hears every attempt (for the metrics). */
export function watchEncryptionConfig(
  path: string,
  encryption: EncryptionAtRest,
  values: ParsedFlags['values'],
  logger: Logger,
  onReload: (outcome: ReloadOutcome) => void = () => {},
): () => void {
  let last = readFileSync(path, 'utf8')
  let pending = Promise.resolve()
  const reload = async (): Promise<void> => {
    let text: string
    try {
      text = readFileSync(path, 'utf8')
    } catch (err) {
      logger.error({ file: path, err: (err as Error).message }, 'reloading --encryption-provider-config failed: the file cannot be read; keeping the configuration in effect')
      return
    }
    if (text === last) return
    last = text
    try {
      await encryption.reload(loadEncryptionConfiguration(text, path, encryptionLoadOptions(values)))
      logger.info({ file: path }, 'reloaded --encryption-provider-config')
      onReload({ ok: true })
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err)
      logger.error({ file: path, err: message }, 'reloading --encryption-provider-config failed; keeping the configuration in effect')
      onReload({ ok: false, error: message })
    }
  }
  const onChange = (current: Stats, previous: Stats): void => {
    if (current.mtimeMs !== previous.mtimeMs || current.size !== previous.size || current.ino !== previous.ino) pending = pending.then(reload)
  }
  watchFile(path, { interval: POLL_INTERVAL_MS, persistent: false }, onChange)
  return () => unwatchFile(path, onChange)
}
