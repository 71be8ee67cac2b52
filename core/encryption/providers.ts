/**
 * One provider entry of an EncryptionConfiguration as the transformer
 * upstream builds for it (server/options/encryptionconfig): the keys of an
 * AES or secretbox provider each under `<key name>:`, the first key
 * writing, inside the provider's own `k8s:enc:<provider>:v1:`; identity
 * with no prefix at all; a KMS plugin under `k8s:enc:kms:<v1|v2>:<name>:`,
 * its transformer built by the caller (it holds a connection).
 */
import type { EncryptionKey, EncryptionProvider } from '../config/encryption.js'
import type { ValueTransformer } from '../storage/value/transformer.js'
import { aesCbcTransformer, aesGcmTransformer } from './aes.js'
import { identityProvider, type PrefixedTransformer, prefixBytes, prefixTransformers } from './prefix-transformers.js'
import { secretboxTransformer } from './secretbox.js'

/** A provider this server cannot put in effect yet; start-up stops with its message. */
export class UnsupportedProviderError extends Error {}

const CIPHERS = {
  aesgcm: { cipher: aesGcmTransformer, noMatch: 'no matching key was found for the provided AES transformer' },
  aescbc: { cipher: aesCbcTransformer, noMatch: 'no matching key was found for the provided AES transformer' },
  secretbox: { cipher: secretboxTransformer, noMatch: 'no matching key was found for the provided Secretbox transformer' },
} as const

function keyed(type: keyof typeof CIPHERS, keys: readonly EncryptionKey[]): ValueTransformer {
  const { cipher, noMatch } = CIPHERS[type]
  return prefixTransformers(
    noMatch,
    keys.map((k) => ({ prefix: prefixBytes(`${k.name}:`), transformer: cipher(k.secret) })),
  )
}

export type KmsProviderConfig = Extract<EncryptionProvider, { type: 'kms' }>

/** Builds the transformer of a KMS plugin; absent where no KMS transport is available. */
export type KmsTransformerBuilder = (provider: KmsProviderConfig) => ValueTransformer

export function providerTransformer(provider: EncryptionProvider, kms?: KmsTransformerBuilder): PrefixedTransformer {
  switch (provider.type) {
    case 'identity':
      return { prefix: new Uint8Array(0), transformer: identityProvider }
    case 'kms':
      if (!kms) {
        throw new UnsupportedProviderError(
          `the kms provider ${JSON.stringify(provider.name)} (apiVersion ${provider.apiVersion}) needs a KMS transport, and none was given (ports.kmsClients)`,
        )
      }
      return { prefix: prefixBytes(`k8s:enc:kms:${provider.apiVersion}:${provider.name}:`), transformer: kms(provider) }
    default:
      return { prefix: prefixBytes(`k8s:enc:${provider.type}:v1:`), transformer: keyed(provider.type, provider.keys) }
  }
}
