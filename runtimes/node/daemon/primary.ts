/**
 * The primary process of `--workers N`: what must happen once before the
 * workers start (the config files read and checked, the certificates and
 * service account key written into --cert-dir), then the workers, the
 * admin kubeconfig once the port is known, and the rotations of the audit
 * log the workers share. It serves no request itself.
 */
import type { ParsedFlags } from '../../../core/options/flags/index.js'
import type { Logger } from '../../../core/logging/logger.js'
import { ConfigFilesError, loadConfigFiles } from './config-files.js'
import { StartupError } from './daemon-options.js'
import type { DaemonFlags } from './flags.js'
import { pkiOptionsOf, preparePki } from './pki.js'
import { serviceAccountKeyOptionsOf, serviceAccountKeys } from './service-account-keys.js'
import { sharedAuditLogRotation } from './audit-log-rotation.js'
import { superviseWorkers } from './workers.js'

export interface PrimaryOptions {
  flags: DaemonFlags
  parsed: ParsedFlags
  logger: Logger
  /** How long the workers' shutdown may take before they are killed. */
  shutdownDeadlineMs: number
}

/**
 * Writes what the workers would otherwise all write at once, then supervises
 * them; resolves with the exit code. Throws a StartupError for what stops
 * start-up here, before any worker runs.
 */
export async function runPrimary({ flags, parsed, logger, shutdownDeadlineMs }: PrimaryOptions): Promise<number> {
  try {
    loadConfigFiles(parsed, logger)
  } catch (err) {
    if (err instanceof ConfigFilesError) throw new StartupError(...err.problems)
    throw err
  }
  const pki = await preparePki(pkiOptionsOf(flags, logger)).catch((err: Error) => {
    throw new StartupError(err.message)
  })
  // The signing key generated into --cert-dir when none is given; an external signer holds its own.
  if (!flags.serviceAccounts.signingEndpoint) {
    await serviceAccountKeys(serviceAccountKeyOptionsOf(flags, pki.serving.privateKey, logger)).catch((err: Error) => {
      throw new StartupError(err.message)
    })
  }
  const count = parsed.values['workers']
  const auditLog = sharedAuditLogRotation(parsed.values, logger)
  const code = await superviseWorkers({
    count,
    logger,
    shutdownDeadlineMs,
    ...(auditLog ? { onRotateAuditLog: (inode, reopenAll) => auditLog.request(inode, reopenAll) } : {}),
    async onFirstListening(url, port) {
      const kubeconfigPath = await pki.writeKubeconfig(url)
      logger.info(
        { url, port, workers: count, bindAddress: flags.bindAddress, kubeconfig: kubeconfigPath ?? null },
        `Serving on ${url} with ${count} worker processes. ${kubeconfigPath ? `Try: kubectl --kubeconfig ${kubeconfigPath} get ns` : 'Client certificates are verified against --client-ca-file.'}`,
      )
    },
  })
  // The last rotated file compressed before the daemon exits, as a single process's shutdown waits for it.
  await auditLog?.settled()
  return code
}
