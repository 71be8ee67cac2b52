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
import { providerTransformer } from './providers.js'
import { identityProvider, prefixTransformers } from './prefix-transformers.js'
import { KeyTransformers } from '../storage/value/key-transformers.js'

export interface GroupResourceName {
  /** '' for the core group. */
  group: string
  resource: string
}

const keyOf = (group: string, resource: string): string => `${resource}.${group}`

export class EncryptionTransformers {
  private readonly byName = new Map<string, ValueTransformer>()

  /** Builds every provider now: a provider that cannot be used throws (UnsupportedProviderError) before anything is stored. */
  constructor(config: EncryptionConfiguration) {
    for (const entry of config.resources) {
      const transformer = prefixTransformers(
        'no matching prefix found',
        entry.providers.map((p) => providerTransformer(p)),
      )
      for (const { group, resource } of entry.resources) {
        const name = keyOf(group, resource)
        if (!this.byName.has(name)) this.byName.set(name, transformer)
      }
    }
  }

  forResource({ group, resource }: GroupResourceName): ValueTransformer {
    return this.byName.get(keyOf(group, resource)) ?? this.byName.get(keyOf(group, '*')) ?? this.byName.get(keyOf('*', '*')) ?? identityProvider
  }
}

/**
 * The key transformers of a configuration, for backends shared by many
 * resources (the daemon's etcd or embedded store, the in-memory store).
 */
export function encryptionKeyTransformers(config: EncryptionConfiguration): KeyTransformers {
  const encryption = new EncryptionTransformers(config)
  return new KeyTransformers((resource) => encryption.forResource(resource))
}
