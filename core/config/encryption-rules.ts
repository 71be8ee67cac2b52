/**
 * The rules of an EncryptionConfiguration beyond its structure, worded as
 * upstream's ValidateEncryptionConfiguration words them: resources and
 * providers present, one member per provider entry, key names and secrets,
 * key lengths, the KMS plugin fields, resource names, and wildcards that
 * would mask other entries (spec: EncryptionConfiguration rules 2, 3 and 5).
 */
import { base64DecodeStrict } from '../machinery/base64.js'
import { formatGoDuration } from '../machinery/duration.js'
import { type FieldError, FieldPath, invalid, required } from '../machinery/field.js'
import type { EncryptionFile, GroupResource, KmsEntry, ProviderEntry } from './encryption.js'
import { GoUrlError, parseGoUrl } from './go-url.js'
import { appendAll } from '../machinery/append-all.js'

export interface EncryptionRuleOptions {
  /**
   * `--encryption-provider-config-automatic-reload`: KMS v1 plugin names
   * must then be unique too, since the health checks are told apart by name.
   */
  reload?: boolean
  /** The KMSv1 feature gate: off by default since 1.29, so a v1 plugin stops start-up. */
  kmsV1?: boolean
}

// Upstream's crypto/aes accepts 16, 24 and 32 bytes; the spec allows only 32 for AES-CBC.
const AESGCM_KEY_SIZES = [16, 24, 32]
const AESCBC_KEY_SIZES = [32]
const SECRETBOX_KEY_SIZES = [32]

const KMS_DEFAULT_TIMEOUT_MS = 3000
const KMS_DEFAULT_CACHE_SIZE = 1000

const KMS_V1_DISABLED =
  'KMSv1 is deprecated and will only receive security updates going forward. Use KMSv2 instead.  Set --feature-gates=KMSv1=true to use the deprecated KMSv1 feature.'

// Resources with no REST API: upstream stores them, but never through a transformer.
const NON_REST_RESOURCES = new Set(['apiserveripinfo', 'serviceipallocations', 'servicenodeportallocations'])

export function parseGroupResource(text: string): GroupResource {
  const dot = text.indexOf('.')
  return dot < 0 ? { group: '', resource: text } : { group: text.slice(dot + 1), resource: text.slice(0, dot) }
}

/** `resource.group`, `resource` for the core group, and `*.` for every core resource, as upstream prints them. */
function groupResourceText({ group, resource }: GroupResource): string {
  if (group === '' && resource === '*') return '*.'
  return group ? `${resource}.${group}` : resource
}

const sameGroupResource = (a: GroupResource, b: GroupResource): boolean => a.group === b.group && a.resource === b.resource

/** A KMS entry after upstream's defaulting: apiVersion v1, timeout 3s, and for v1 a cache of 1000. */
export function applyKmsDefaults(kms: KmsEntry): Omit<KmsEntry, 'timeout'> & { timeout: number } {
  const apiVersion = kms.apiVersion || 'v1'
  const cachesize = kms.cachesize ?? (apiVersion === 'v1' ? KMS_DEFAULT_CACHE_SIZE : undefined)
  return { ...kms, apiVersion, cachesize, timeout: kms.timeout ?? KMS_DEFAULT_TIMEOUT_MS }
}

export function validateEncryption(file: EncryptionFile, options: EncryptionRuleOptions): FieldError[] {
  const root = FieldPath.root('resources')
  if (file.resources.length === 0) return [required(root, `at least one ${root} is required`)]
  const errs: FieldError[] = []
  const kmsNames = new Set<string>()
  // Every group/resource named by an earlier entry, for the masking rule.
  const earlier: GroupResource[] = []
  file.resources.forEach((entry, i) => {
    const r = root.index(i).child('resources')
    const p = root.index(i).child('providers')
    if (entry.resources.length === 0) errs.push(required(r, `at least one ${r} is required`))
    errs.push(...resourceOverlap(entry.resources, r), ...resourceNames(entry.resources, earlier, r))
    appendAll(earlier, entry.resources.map(parseGroupResource))
    if (entry.providers.length === 0) errs.push(required(p, `at least one ${p} is required`))
    entry.providers.forEach((provider, j) => {
      const path = p.index(j)
      appendAll(errs, singleProvider(provider, path))
      if (provider.kms) {
        appendAll(errs, kmsRules(applyKmsDefaults(provider.kms), path.child('kms'), kmsNames, options))
        kmsNames.add(provider.kms.name)
      } else if (provider.aesgcm) {
        appendAll(errs, keyRules(provider.aesgcm.keys, path.child('aesgcm').child('keys'), AESGCM_KEY_SIZES))
      } else if (provider.aescbc) {
        appendAll(errs, keyRules(provider.aescbc.keys, path.child('aescbc').child('keys'), AESCBC_KEY_SIZES))
      } else if (provider.secretbox) {
        appendAll(errs, keyRules(provider.secretbox.keys, path.child('secretbox').child('keys'), SECRETBOX_KEY_SIZES))
      }
    })
  })
  return errs
}

/** A duplicate, or a wildcard that covers another name, inside one list (spec rule 3). */
function resourceOverlap(resources: string[], path: FieldPath): FieldError[] {
  const parsed = resources.map(parseGroupResource)
  let duplicate = false
  let overlap = false
  // Upstream's pairwise walk: only the first equal pair counts as the duplicate, so a
  // repeated wildcard (`*.`, `*.`) is reported as an overlap as well.
  parsed.forEach((a, i) =>
    parsed.forEach((b, j) => {
      if (i === j) return
      if (sameGroupResource(a, b) && !duplicate) {
        duplicate = true
        return
      }
      if ((a.group === '*' && a.resource === '*') || (a.group === b.group && (a.resource === '*' || b.resource === '*'))) overlap = true
    }),
  )
  const errs: FieldError[] = []
  if (duplicate) errs.push(invalid(path, resources, 'the same resource cannot be specified multiple times'))
  if (overlap) {
    errs.push(invalid(path, resources, "using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked"))
  }
  return errs
}

function resourceNameProblem(name: string): string | undefined {
  const { group, resource } = parseGroupResource(name)
  if (name.toLowerCase() !== name) return 'resource name should not contain capital letters'
  if (name === '*') return "use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources"
  if (NON_REST_RESOURCES.has(name)) return 'resources which do not have REST API/s cannot be encrypted'
  if (group === 'events.k8s.io') {
    return "'*.events.k8s.io' objects are stored using the 'events' API group in etcd. Use 'events' instead in the config file"
  }
  if (group === 'extensions') return "'extensions' group has been removed and cannot be used for encryption"
  if (group === '*' && resource !== '*') return 'encrypting the same resource across groups is not supported'
  return undefined
}

/**
 * Each name on its own: its spelling, and whether a wildcard of an earlier
 * entry already covers it, so it would never be used (spec rule 3 across
 * entries; upstream finds this while building the transformers, still
 * before the server starts).
 */
function resourceNames(resources: string[], earlier: readonly GroupResource[], path: FieldPath): FieldError[] {
  return resources.flatMap((name, j) => {
    const problem = resourceNameProblem(name)
    if (problem) return [invalid(path.index(j), name, problem)]
    const gr = parseGroupResource(name)
    const mask = [{ group: gr.group, resource: '*' }, { group: '*', resource: '*' }].find((w) => earlier.some((e) => sameGroupResource(e, w)))
    return mask ? [invalid(path.index(j), name, `resource "${groupResourceText(gr)}" is masked by earlier rule "${groupResourceText(mask)}"`)] : []
  })
}

/** The entry without its key material, for messages: secrets never reach a log. */
function redacted(provider: ProviderEntry): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [name, member] of Object.entries(provider)) {
    if (member === undefined) continue
    out[name] = member && 'keys' in member ? { keys: member.keys.map((k) => ({ name: k.name, secret: 'REDACTED' })) } : member
  }
  return out
}

function singleProvider(provider: ProviderEntry, path: FieldPath): FieldError[] {
  const found = Object.values(provider).filter((member) => member !== undefined).length
  if (found === 0) {
    return [invalid(path, redacted(provider), 'provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity')]
  }
  if (found > 1) return [invalid(path, redacted(provider), 'more than one provider specified in a single element, should split into different list elements')]
  return []
}

function keyRules(keys: { name: string; secret: string }[], path: FieldPath, sizes: number[]): FieldError[] {
  if (keys.length === 0) return [required(path, 'at least one keys is required')]
  return keys.flatMap((key, i) => {
    const at = path.index(i)
    const errs: FieldError[] = []
    if (key.name === '') errs.push(required(at.child('name'), 'name is a mandatory field for a key'))
    if (key.secret === '') return [...errs, required(at.child('secret'), 'secret is a mandatory field for a key')]
    let length: number
    try {
      length = base64DecodeStrict(key.secret).length
    } catch {
      return [...errs, invalid(at.child('secret'), 'REDACTED', 'secrets must be base64 encoded')]
    }
    if (!sizes.includes(length)) {
      errs.push(invalid(at.child('secret'), 'REDACTED', `secret is not of the expected length, got ${length}, expected one of [${sizes.join(' ')}]`))
    }
    return errs
  })
}

function kmsRules(kms: ReturnType<typeof applyKmsDefaults>, path: FieldPath, names: ReadonlySet<string>, options: EncryptionRuleOptions): FieldError[] {
  const errs: FieldError[] = []
  const name = path.child('name')
  if (kms.name === '') errs.push(required(name, 'name is a mandatory field for a provider'))
  // v2 names go into the stored data's prefix (`k8s:enc:kms:v2:<name>:`), where ':' separates.
  if (kms.apiVersion !== 'v1' && kms.name.includes(':')) errs.push(invalid(name, kms.name, `invalid KMS provider name ${kms.name}, must not contain ':'`))
  if ((options.reload || kms.apiVersion !== 'v1') && names.has(kms.name)) {
    errs.push(invalid(name, kms.name, `duplicate KMS provider name ${kms.name}, names must be unique`))
  }
  if (kms.timeout <= 0) errs.push(invalid(path.child('timeout'), formatGoDuration(kms.timeout * 1e6), 'timeout should be a positive value'))
  appendAll(errs, kmsEndpoint(kms.endpoint, path.child('endpoint')))
  const cachesize = path.child('cachesize')
  if (kms.apiVersion !== 'v1' && kms.cachesize !== undefined) errs.push(invalid(cachesize, kms.cachesize, 'cachesize is not supported in v2'))
  if (kms.apiVersion === 'v1' && kms.cachesize === 0) errs.push(invalid(cachesize, 0, 'cachesize should be a positive value, or negative to disable'))
  const apiVersion = path.child('apiVersion')
  if (kms.apiVersion !== 'v1' && kms.apiVersion !== 'v2') {
    // Upstream's message names the field where it meant the value; kept so that searches for it find this.
    errs.push(invalid(apiVersion, kms.apiVersion, 'unsupported apiVersion apiVersion for KMS provider, only v1 and v2 are supported'))
  }
  if (kms.apiVersion === 'v1' && !options.kmsV1) errs.push(invalid(apiVersion, 'v1', KMS_V1_DISABLED))
  return errs
}

function kmsEndpoint(endpoint: string, path: FieldPath): FieldError[] {
  if (endpoint === '') return [invalid(path, '', 'endpoint is a mandatory field for a kms')]
  try {
    const url = parseGoUrl(endpoint)
    if (url.scheme !== 'unix') return [invalid(path, endpoint, `unsupported scheme ${JSON.stringify(url.scheme)} for KMS provider, only unix is supported`)]
    // Upstream only fails later, when it dials an empty socket path.
    if (url.path === '' || url.path === '/') return [invalid(path, endpoint, 'invalid endpoint for kms provider, error: no socket path after unix://')]
  } catch (err) {
    if (!(err instanceof GoUrlError)) throw err
    return [invalid(path, endpoint, `invalid endpoint for kms provider, error: ${err.message}`)]
  }
  return []
}
