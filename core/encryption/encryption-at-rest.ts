/**
 * The encryption configuration in effect for a server's stores: the key
 * transformers the backends ask, the KMS health checks named as upstream's
 * (`kms-provider-<n>` each, or one `kms-providers` when only KMS v2 plugins
 * are configured or the file is reloaded automatically), and the reload of
 * `--encryption-provider-config-automatic-reload`: a new configuration
 * whose KMS plugins answer replaces the old one for every key at once,
 * and the old plugins' connections close after a grace period.
 */
import type { HealthCheck } from '../lifecycle/health-check.js'
import type { EncryptionConfiguration } from '../config/encryption.js'
import { KeyTransformers } from '../storage/value/key-transformers.js'
import { backgroundTimer } from './kms/probe.js'
import { type EncryptionDependencies, EncryptionTransformers, type GroupResourceName } from './resource-transformers.js'

const KMS_RELOAD_CHECK = 'kms-providers'

export interface EncryptionAtRestOptions extends EncryptionDependencies {
  /** `--encryption-provider-config-automatic-reload`: one combined KMS check, present even without KMS. */
  reload?: boolean
}

export class EncryptionAtRest extends KeyTransformers {
  private current: EncryptionTransformers
  private readonly checks: HealthCheck[]

  constructor(
    config: EncryptionConfiguration,
    private readonly options: EncryptionAtRestOptions = {},
  ) {
    const first = new EncryptionTransformers(config, options)
    super((resource) => first.forResource(resource))
    this.current = first
    if (options.reload || first.onlyKmsV2) this.checks = [{ name: KMS_RELOAD_CHECK, check: () => this.current.checkAllKms() }]
    else this.checks = first.kmsProviders.map((p, i) => ({ name: `kms-provider-${i}`, check: () => p.check() }))
  }

  override covers(resource: GroupResourceName): boolean {
    return this.current.covers(resource)
  }

  override healthChecks(): readonly HealthCheck[] {
    return this.checks
  }

  /**
   * Puts `config` in effect if its KMS plugins answer; throws (and leaves
   * the configuration in effect as it was) otherwise.
   */
  async reload(config: EncryptionConfiguration): Promise<void> {
    const next = new EncryptionTransformers(config, this.options)
    try {
      await next.checkAllKms()
    } catch (err) {
      next.close()
      throw err
    }
    const old = this.current
    this.current = next
    this.replace((resource) => next.forResource(resource))
    // Reads and writes under way may still hold the old plugins: close them once those are over.
    const graceMs = 2 * Math.max(0, ...config.resources.flatMap((r) => r.providers.map((p) => (p.type === 'kms' ? p.timeoutMs : 0))))
    backgroundTimer(graceMs, () => old.close())
  }

  override close(): void {
    this.current.close()
  }
}

/**
 * The key transformers of a configuration, for backends shared by many
 * resources (the daemon's etcd or embedded store, the in-memory store).
 */
export function encryptionKeyTransformers(config: EncryptionConfiguration, options: EncryptionAtRestOptions = {}): EncryptionAtRest {
  return new EncryptionAtRest(config, options)
}
