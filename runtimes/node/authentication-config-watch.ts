/**
 * Upstream re-reads `--authentication-config` when it changes: a valid new
 * file replaces the JWT authenticators, an invalid one is logged and the
 * authenticators in effect stay. The file is polled (its modification time
 * and size), which also sees a file replaced by a rename, as editors and
 * ConfigMap mounts do.
 */
import { readFileSync, type Stats, unwatchFile, watchFile } from 'node:fs'
import { authenticationFlagConflicts, loadAuthenticationConfiguration } from '../../core/config/authentication.js'
import { ConfigFileError } from '../../core/config/decode.js'
import type { ApiServer } from '../../core/index.js'
import type { ParsedFlags } from '../../core/options/flags/index.js'
import type { Logger } from '../../core/ports.js'

/** How often the file is looked at. */
const POLL_INTERVAL_MS = 1000

/** Starts watching; returns the function that stops. */
export function watchAuthenticationConfig(path: string, server: ApiServer, parsed: ParsedFlags, logger: Logger): () => void {
  let last = readFileSync(path, 'utf8')
  const reload = async (): Promise<void> => {
    let text: string
    try {
      text = readFileSync(path, 'utf8')
    } catch (err) {
      logger.error({ file: path, err: (err as Error).message }, 'reloading --authentication-config failed: the file cannot be read; keeping the configuration in effect')
      return
    }
    if (text === last) return
    last = text
    try {
      const config = loadAuthenticationConfiguration(text, path, { disallowedIssuers: parsed.values['service-account-issuer'] })
      const conflicts = authenticationFlagConflicts(config, parsed.set)
      if (conflicts.length) throw new Error(conflicts.join('; '))
      await server.reloadAuthenticationConfiguration(config)
      logger.info({ file: path }, 'reloaded --authentication-config')
    } catch (err) {
      const message = err instanceof ConfigFileError || err instanceof Error ? err.message : String(err)
      logger.error({ file: path, err: message }, 'reloading --authentication-config failed; keeping the configuration in effect')
    }
  }
  const onChange = (current: Stats, previous: Stats): void => {
    if (current.mtimeMs !== previous.mtimeMs || current.size !== previous.size || current.ino !== previous.ino) void reload()
  }
  watchFile(path, { interval: POLL_INTERVAL_MS, persistent: false }, onChange)
  return () => unwatchFile(path, onChange)
}
