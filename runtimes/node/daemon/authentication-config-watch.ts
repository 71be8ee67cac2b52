/**
 * Upstream re-reads `--authentication-config` when it changes: a valid new
 * file replaces the JWT authenticators, an invalid one (or one that conflicts
 * with the --oidc-* flags given) is logged and the authenticators in effect
 * stay (config-file-watch.ts). As upstream, the `anonymous` section is read
 * at start-up only: a reload that changes it says so in a warning, rather
 * than reporting the file reloaded while anonymous requests go on as before.
 */
import { authenticationFlagConflicts, loadAuthenticationConfiguration } from '../../../core/config/authentication.js'
import type { ApiServer } from '../../../core/index.js'
import type { ParsedFlags } from '../../../core/options/flags/index.js'
import type { Logger } from '../../../core/logging/logger.js'
import { readFileSync } from 'node:fs'
import { watchConfigFile } from './config-file-watch.js'

/** Starts watching; returns the function that stops. */
export function watchAuthenticationConfig(path: string, server: ApiServer, parsed: ParsedFlags, logger: Logger): () => void {
  const anonymousOf = (text: string) => JSON.stringify(loadAuthenticationConfiguration(text, path, { disallowedIssuers: parsed.values['service-account-issuer'] }).anonymous ?? null)
  // The section in effect: the one the server started with (it read this file a moment ago, unchanged since or refused).
  const startedWith = anonymousOf(readFileSync(path, 'utf8'))
  return watchConfigFile(
    {
      path,
      flag: '--authentication-config',
      apply: async (text) => {
        const config = loadAuthenticationConfiguration(text, path, { disallowedIssuers: parsed.values['service-account-issuer'] })
        const conflicts = authenticationFlagConflicts(config, parsed.set)
        if (conflicts.length) throw new Error(conflicts.join('; '))
        await server.reloadAuthenticationConfiguration(config)
        if (JSON.stringify(config.anonymous ?? null) !== startedWith)
          logger.warn({ file: path }, 'the anonymous section of --authentication-config changed: it takes effect at the next start; anonymous requests are served as before until then')
      },
    },
    logger,
  )
}
