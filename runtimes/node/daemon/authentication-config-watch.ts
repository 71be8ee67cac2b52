/**
 * Upstream re-reads `--authentication-config` when it changes: a valid new
 * file replaces the JWT authenticators, an invalid one (or one that conflicts
 * with the --oidc-* flags given) is logged and the authenticators in effect
 * stay (config-file-watch.ts).
 */
import { authenticationFlagConflicts, loadAuthenticationConfiguration } from '../../../core/config/authentication.js'
import type { ApiServer } from '../../../core/index.js'
import type { ParsedFlags } from '../../../core/options/flags/index.js'
import type { Logger } from '../../../core/logging/logger.js'
import { watchConfigFile } from './config-file-watch.js'

/** Starts watching; returns the function that stops. */
export function watchAuthenticationConfig(path: string, server: ApiServer, parsed: ParsedFlags, logger: Logger): () => void {
  return watchConfigFile(
    {
      path,
      flag: '--authentication-config',
      apply: async (text) => {
        const config = loadAuthenticationConfiguration(text, path, { disallowedIssuers: parsed.values['service-account-issuer'] })
        const conflicts = authenticationFlagConflicts(config, parsed.set)
        if (conflicts.length) throw new Error(conflicts.join('; '))
        await server.reloadAuthenticationConfiguration(config)
      },
    },
    logger,
  )
}
