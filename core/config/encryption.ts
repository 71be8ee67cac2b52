/**
 * EncryptionConfiguration, the file of `--encryption-provider-config`
 * (spec: EncryptionConfiguration and its nested types). Which resources are
 * stored encrypted, and with which providers, in order: the first provider
 * of an entry writes, all of them read.
 *
 * The loader returns the keys already decoded from base64, so the storage
 * transformers never decode (or mis-decode) a key again.
 */
import { z } from 'zod'
import { base64DecodeStrict } from '../machinery/base64.js'
import { CONFIG_GROUP, type ConfigKind, decodeConfig, parseConfigText } from './decode.js'
import { applyKmsDefaults, type EncryptionRuleOptions, parseGroupResource, validateEncryption } from './encryption-rules.js'
import { goDuration, goList, goPointer, goString, int32 } from './fields.js'
import { parseGoUrl } from './go-url.js'

const keySchema = z.lazy(() => z.strictObject({ name: goString, secret: goString }))
const keysSchema = z.lazy(() => z.strictObject({ keys: goList(keySchema) }))

const kmsSchema = z.lazy(() => z.strictObject({
  apiVersion: goString,
  name: goString,
  cachesize: goPointer(int32),
  endpoint: goString,
  timeout: goPointer(goDuration),
}))

const providerSchema = z.lazy(() => z.strictObject({
  aesgcm: goPointer(keysSchema),
  aescbc: goPointer(keysSchema),
  secretbox: goPointer(keysSchema),
  identity: goPointer(z.strictObject({})),
  kms: goPointer(kmsSchema),
}))

const resourceSchema = z.lazy(() => z.strictObject({
  resources: goList(z.string()),
  providers: goList(providerSchema),
}))

const encryptionSchema = z.lazy(() => z.strictObject({ resources: goList(resourceSchema) }))

/** The file as written, after Go's zero values are filled in. */
export type EncryptionFile = z.infer<typeof encryptionSchema>
export type ProviderEntry = z.infer<typeof providerSchema>
export type KmsEntry = z.infer<typeof kmsSchema>

/** A resource name split as upstream's schema.ParseGroupResource splits it: `*.` is every core resource, `*.*` everything. */
export interface GroupResource {
  group: string
  resource: string
}

export interface EncryptionKey {
  name: string
  /** The decoded key: 16, 24 or 32 bytes for aesgcm, 32 for aescbc and secretbox. */
  secret: Uint8Array
}

export type EncryptionProvider =
  | { type: 'aesgcm' | 'aescbc' | 'secretbox'; keys: EncryptionKey[] }
  | { type: 'identity' }
  | {
      type: 'kms'
      apiVersion: 'v1' | 'v2'
      name: string
      endpoint: string
      /** The unix socket to dial, as upstream derives it from `endpoint` (`@name` for an abstract socket). */
      socketPath: string
      /** Only for v1: secrets cached in memory; negative disables the cache. */
      cacheSize?: number
      timeoutMs: number
    }

export interface EncryptionResourceRule {
  resources: GroupResource[]
  /** The first provider encrypts; every provider is tried in order to decrypt. */
  providers: EncryptionProvider[]
}

export interface EncryptionConfiguration {
  /**
   * In precedence order (spec rule 1): a resource takes the providers of the
   * first entry that names it, then of the first `*.<group>` entry, then of
   * `*.*`. An entry whose first provider is `identity` leaves its resources
   * unencrypted although a later wildcard covers them (spec rule 4).
   */
  resources: EncryptionResourceRule[]
}

export type EncryptionLoadOptions = EncryptionRuleOptions
export { parseGroupResource }

function encryptionKind(kind: string, apiVersions: readonly string[], options: EncryptionRuleOptions): ConfigKind<EncryptionFile> {
  // Anything malformed under a keyed provider (a secret given as a list) is reported without its value, as the rules report a bad secret.
  const secret = (path: readonly PropertyKey[]) => path.some((p) => p === 'aescbc' || p === 'aesgcm' || p === 'secretbox')
  return { kind, apiVersions, schema: encryptionSchema, validate: (file) => validateEncryption(file, options), secret }
}

/** Upstream also reads `kind: EncryptionConfig` with `apiVersion: v1`, after a documentation mistake once showed it. */
function isLegacyHeader(doc: unknown): boolean {
  if (typeof doc !== 'object' || doc === null) return false
  const { kind, apiVersion } = doc as { kind?: unknown; apiVersion?: unknown }
  return kind === 'EncryptionConfig' && apiVersion === 'v1'
}

/**
 * Reads and validates the text of an EncryptionConfiguration file. Throws
 * ConfigFileError listing every problem; returns the providers with their
 * keys decoded otherwise.
 */
export function loadEncryptionConfiguration(text: string, source: string, options: EncryptionLoadOptions = {}): EncryptionConfiguration {
  const kind = isLegacyHeader(parseConfigText(text, source, 'EncryptionConfiguration'))
    ? encryptionKind('EncryptionConfig', ['v1'], options)
    : encryptionKind('EncryptionConfiguration', [`${CONFIG_GROUP}/v1`], options)
  const file = decodeConfig(text, source, kind)
  return {
    resources: file.resources.map((entry) => ({
      resources: entry.resources.map(parseGroupResource),
      providers: entry.providers.map(toProvider),
    })),
  }
}

function decodeKeys(keys: { name: string; secret: string }[]): EncryptionKey[] {
  return keys.map((k) => ({ name: k.name, secret: base64DecodeStrict(k.secret) }))
}

// The rules have accepted the entry: exactly one member is set, keys decode, the endpoint parses.
function toProvider(entry: ProviderEntry): EncryptionProvider {
  if (entry.kms) {
    const kms = applyKmsDefaults(entry.kms)
    return {
      type: 'kms',
      apiVersion: kms.apiVersion === 'v1' ? 'v1' : 'v2',
      name: kms.name,
      endpoint: kms.endpoint,
      socketPath: kmsSocketPath(kms.endpoint),
      ...(kms.cachesize === undefined ? {} : { cacheSize: kms.cachesize }),
      timeoutMs: kms.timeout,
    }
  }
  if (entry.aesgcm) return { type: 'aesgcm', keys: decodeKeys(entry.aesgcm.keys) }
  if (entry.aescbc) return { type: 'aescbc', keys: decodeKeys(entry.aescbc.keys) }
  if (entry.secretbox) return { type: 'secretbox', keys: decodeKeys(entry.secretbox.keys) }
  return { type: 'identity' }
}

/** The socket a `unix://` endpoint names: its path, or `@name` for a Linux abstract socket (`unix:///@name`). */
export function kmsSocketPath(endpoint: string): string {
  const { path } = parseGoUrl(endpoint)
  return path.startsWith('/@') ? path.slice(1) : path
}
