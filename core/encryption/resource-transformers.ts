/**
 * Which transformer a resource's stored values go through, per the
 * EncryptionConfiguration (spec: EncryptionConfiguration rules 1, 2 and 4):
 * the entries in order, the first that names a group/resource taking it;
 * then the first `*.<group>` (`*.` for the core group); then `*.*`, which
 * also covers custom resources. A resource no entry covers is stored as is,
 * and a value marked as encrypted is refused for it, as upstream does.
 */
import type { EncryptionConfiguration } from '../config/encryption.js'
import type { ValueTransformer } from '../storage/value/transformer.js'
import type { KmsClientFactory } from './kms/client.js'
import { KmsV1Provider } from './kms/kms-v1.js'
import { KmsV2Provider } from './kms/kms-v2.js'
import { DEFAULT_KMS_TIMINGS, type KmsTimings } from './kms/probe.js'
import { type KmsProviderConfig, providerTransformer } from './providers.js'
import { identityProvider, prefixTransformers } from './prefix-transformers.js'

export interface GroupResourceName {
  /** '' for the core group. */
  group: string
  resource: string
}

export interface EncryptionDependencies {
  /** The transport to KMS plugins; a `kms` provider without it is refused. */
  kms?: KmsClientFactory
  /** Upstream's KMS health and polling intervals, shortened by tests. */
  kmsTimings?: Partial<KmsTimings>
  now?: () => number
}

export type KmsProvider = KmsV1Provider | KmsV2Provider

const keyOf = (group: string, resource: string): string => `${resource}.${group}`

export class EncryptionTransformers {
  private readonly byName = new Map<string, ValueTransformer>()
  /** The KMS plugins of the configuration, in the order they appear (their health checks are numbered so). */
  readonly kmsProviders: KmsProvider[] = []

  /** Builds every provider now: a provider that cannot be used throws (UnsupportedProviderError) before anything is stored. */
  constructor(config: EncryptionConfiguration, deps: EncryptionDependencies = {}) {
    const timings = { ...DEFAULT_KMS_TIMINGS, ...deps.kmsTimings }
    const factory = deps.kms
    const kms = factory
      ? (p: KmsProviderConfig): ValueTransformer => {
          const endpoint = { name: p.name, socketPath: p.socketPath, timeoutMs: p.timeoutMs }
          const provider =
            p.apiVersion === 'v1'
              ? new KmsV1Provider(p.name, factory.v1(endpoint), p.cacheSize ?? 1000, timings, deps.now)
              : new KmsV2Provider(p.name, factory.v2(endpoint), timings, deps.now)
          this.kmsProviders.push(provider)
          return provider
        }
      : undefined
    try {
      for (const entry of config.resources) {
        const transformer = prefixTransformers(
          'no matching prefix found',
          entry.providers.map((p) => providerTransformer(p, kms)),
        )
        for (const { group, resource } of entry.resources) {
          const name = keyOf(group, resource)
          if (!this.byName.has(name)) this.byName.set(name, transformer)
        }
      }
    } catch (err) {
      this.close()
      throw err
    }
  }

  forResource({ group, resource }: GroupResourceName): ValueTransformer {
    return this.byName.get(keyOf(group, resource)) ?? this.byName.get(keyOf(group, '*')) ?? this.byName.get(keyOf('*', '*')) ?? identityProvider
  }

  /** Whether an entry names the resource (an entry starting with identity too: its old values may need decrypting). */
  covers({ group, resource }: GroupResourceName): boolean {
    return this.byName.has(keyOf(group, resource)) || this.byName.has(keyOf(group, '*')) || this.byName.has(keyOf('*', '*'))
  }

  /** Whether only KMS v2 plugins are configured (upstream then reports them in one check). */
  get onlyKmsV2(): boolean {
    return this.kmsProviders.length > 0 && this.kmsProviders.every((p) => p instanceof KmsV2Provider)
  }

  /** Every KMS plugin checked in turn, the failures named by check (upstream's combined `kms-providers`). */
  async checkAllKms(): Promise<void> {
    const failures: string[] = []
    for (const [i, provider] of this.kmsProviders.entries()) {
      await provider.check().catch((err: unknown) => failures.push(`kms-provider-${i}: ${err instanceof Error ? err.message : String(err)}`))
    }
    if (failures.length === 1) throw new Error(failures[0])
    if (failures.length) throw new Error(`[${failures.join(', ')}]`)
  }

  close(): void {
    for (const provider of this.kmsProviders) provider.close()
  }
}

export { EncryptionAtRest, encryptionKeyTransformers } from './encryption-at-rest.js'
