/**
 * `--encryption-provider-config-automatic-reload`: a changed file that loads
 * and whose KMS plugins answer replaces the encryption configuration for every
 * key at once; one that does not is logged and the configuration in effect
 * stays (config-file-watch.ts).
 */
import { loadEncryptionConfiguration } from '../../../core/config/encryption.js'
import type { EncryptionAtRest } from '../../../core/encryption/encryption-at-rest.js'
import type { ParsedFlags } from '../../../core/options/flags/index.js'
import type { Logger } from '../../../core/logging/logger.js'
import { type ReloadOutcome, watchConfigFile } from './config-file-watch.js'
import { encryptionLoadOptions } from './config-files.js'

export type { ReloadOutcome }

/** Starts watching; returns the function that stops. `onReload` hears every attempt (for the metrics). */
export function watchEncryptionConfig(
  path: string,
  encryption: EncryptionAtRest,
  values: ParsedFlags['values'],
  logger: Logger,
  onReload: (outcome: ReloadOutcome) => void = () => {},
): () => void {
  return watchConfigFile(
    {
      path,
      flag: '--encryption-provider-config',
      apply: (text) => encryption.reload(loadEncryptionConfiguration(text, path, encryptionLoadOptions(values))),
      onReload: (outcome) => {
        encryption.reportReload(outcome.ok)
        onReload(outcome)
      },
    },
    logger,
  )
}
