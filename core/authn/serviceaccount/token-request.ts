/**
 * `serviceaccounts/<name>/token`: a TokenRequest is answered with a signed
 * token for the service account, bound to a Pod, Secret or Node when asked,
 * as upstream's TokenREST (pkg/registry/core/serviceaccount/storage/token.go):
 * the same checks in the same order, the same messages.
 */
import { badRequest, conflict, internalError } from '../../machinery/status-error.js'
import type { StoredObjects } from '../../client/stored-objects.js'
import type { Catalogue } from '../../resources/catalogue.js'
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import { fieldPath, invalid, invalidError } from '../../machinery/field.js'
import { boundTokenClaims, type TokenClaims, WARN_ONLY_EXPIRATION_SECONDS } from './claims.js'

const GROUP = 'authentication.k8s.io'
const KIND = 'TokenRequest'
/** The default of `spec.expirationSeconds` (authentication/v1 defaulting). */
const DEFAULT_EXPIRATION_SECONDS = 60 * 60
const MIN_EXPIRATION_SECONDS = 10 * 60
const MAX_EXPIRATION_SECONDS = 2 ** 32

export interface TokenIssuerConfig {
  /** The first `--service-account-issuer`: what issued tokens name in `iss`. */
  issuer: string
  /** Signs the claims: with the signing key, or through the external signer. */
  sign(claims: TokenClaims): Promise<string>
  /** `--api-audiences`: the audiences of a request that names none. */
  apiAudiences: readonly string[]
  /** `--service-account-max-token-expiration` in seconds; 0: no cap. */
  maxExpirationSeconds: number
  /** `--service-account-extend-token-expiration`. */
  extendExpiration: boolean
  /** How long an extended token lives: a year, unless an external signer allows less. */
  extendedExpirationSeconds: number
}

/**
 * Admission of the TokenRequest, as upstream's create handler and TokenREST
 * run it: the mutating plugins on the request as decoded, the validating
 * ones (on a copy) once it is checked and defaulted, both before the bound
 * object is read and anything is signed.
 */
export interface TokenRequestAdmission {
  mutate(request: KubeObject): Promise<KubeObject>
  validate(request: KubeObject): Promise<void>
}

export interface TokenRequestCall {
  namespace: string
  /** The service account's name, from the URL. */
  name: string
  body: unknown
  now: Date
  /** Where the answer's Warning headers are collected. */
  warnings: string[]
  /** Runs admission on the request; absent (an embedder's direct call), no plugin sees it. */
  admission?: TokenRequestAdmission
}

function text(v: unknown): string {
  return typeof v === 'string' ? v : ''
}

/** Where a token request reads the service account and what the token is bound to: as stored, without a request. */
export interface TokenRequestSources {
  readonly catalogue: Catalogue
  readonly stored: StoredObjects
}

async function getObject(sources: TokenRequestSources, resource: string, namespace: string, name: string): Promise<KubeObject> {
  const entry = sources.catalogue.lookup('', 'v1', resource)
  if (!entry) throw badRequest(`${resource} are not served`)
  return sources.stored.get(entry, namespace, name)
}

/** `v1` → core, `apps/v1` → apps: the group of an apiVersion, as schema.ParseGroupVersion reads it. */
function groupVersionOf(apiVersion: string): { group: string; version: string } {
  if (!apiVersion) return { group: '', version: '' }
  const slash = apiVersion.indexOf('/')
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) }
}

interface Bound {
  pod?: KubeObject
  secret?: KubeObject
  node?: { name: string; uid: string }
}

/** Looks up the object the token is to be bound to and checks it is the one the request names. */
async function boundObject(sources: TokenRequestSources, namespace: string, saName: string, ref: Record<string, unknown>): Promise<Bound> {
  const kind = text(ref['kind'])
  const name = text(ref['name'])
  const { group, version } = groupVersionOf(text(ref['apiVersion']))
  let uid: string
  const bound: Bound = {}
  if (group === '' && kind === 'Pod') {
    const pod = await getObject(sources, 'pods', namespace, name)
    const spec = isPlainObject(pod['spec']) ? pod['spec'] : {}
    if (text(spec['serviceAccountName']) !== saName)
      throw badRequest(`cannot bind token for serviceaccount ${JSON.stringify(saName)} to pod running with different serviceaccount name.`)
    uid = pod.metadata.uid ?? ''
    bound.pod = pod
    const nodeName = text(spec['nodeName'])
    if (nodeName) {
      // A pod's node is named even when it is gone: a reader of the token still learns where the pod ran.
      const node = await getObject(sources, 'nodes', '', nodeName).catch((err: unknown) => {
        if ((err as { code?: number }).code === 404) return undefined
        throw err
      })
      bound.node = { name: nodeName, uid: node?.metadata.uid ?? '' }
    }
  } else if (group === '' && kind === 'Node') {
    const node = await getObject(sources, 'nodes', '', name)
    uid = node.metadata.uid ?? ''
    bound.node = { name: node.metadata.name ?? name, uid }
  } else if (group === '' && kind === 'Secret') {
    const secret = await getObject(sources, 'secrets', namespace, name)
    uid = secret.metadata.uid ?? ''
    bound.secret = secret
  } else {
    throw badRequest(`cannot bind token to object of type ${group}/${version}, Kind=${kind}`)
  }
  const wantedUid = text(ref['uid'])
  if (wantedUid && wantedUid !== uid)
    throw conflict(
      { group, resource: kind },
      name,
      `the UID in the bound object reference (${wantedUid}) does not match the UID in record. The object might have been deleted and then recreated`,
    )
  return bound
}

const named = (o: KubeObject): { name: string; uid: string } => ({ name: o.metadata.name ?? '', uid: o.metadata.uid ?? '' })

/** The TokenRequest as the client sent it, typed and defaulted as upstream decodes it (authentication/v1 defaulting). */
function decodedTokenRequest(body: unknown, namespace: string): KubeObject {
  const sent = isPlainObject(body) ? body : {}
  const metadata = isPlainObject(sent['metadata']) ? { ...sent['metadata'] } : {}
  // The request's namespace fills an empty one, as upstream's create handler does before admission.
  if (!text(metadata['namespace'])) metadata['namespace'] = namespace
  const spec = isPlainObject(sent['spec']) ? { ...sent['spec'] } : {}
  if (typeof spec['expirationSeconds'] !== 'number') spec['expirationSeconds'] = DEFAULT_EXPIRATION_SECONDS
  return { kind: KIND, apiVersion: `${GROUP}/v1`, metadata, spec, status: {} } as KubeObject
}

/** Creates a token for the service account; the answer is the TokenRequest with its status. */
export async function createTokenRequest(sources: TokenRequestSources, config: TokenIssuerConfig, call: TokenRequestCall): Promise<KubeObject> {
  const { namespace, name } = call
  let request = decodedTokenRequest(call.body, namespace)
  if (call.admission) request = await call.admission.mutate(request)
  const metadata: Record<string, unknown> = isPlainObject(request.metadata) ? { ...request.metadata } : {}
  const spec = isPlainObject(request['spec']) ? { ...request['spec'] } : {}
  if (text(metadata['name']) && metadata['name'] !== name)
    throw invalidError(GROUP, KIND, name, [invalid(fieldPath('metadata').child('name'), metadata['name'], 'must match the service account name if specified')])
  if (text(metadata['namespace']) && metadata['namespace'] !== namespace)
    throw invalidError(GROUP, KIND, name, [
      invalid(fieldPath('metadata').child('namespace'), metadata['namespace'], 'must match the service account namespace if specified'),
    ])
  const serviceAccount = await getObject(sources, 'serviceaccounts', namespace, name)

  const audiences = Array.isArray(spec['audiences']) && spec['audiences'].length ? spec['audiences'].map(text) : [...config.apiAudiences]
  let expirationSeconds = typeof spec['expirationSeconds'] === 'number' ? spec['expirationSeconds'] : DEFAULT_EXPIRATION_SECONDS
  const ref = isPlainObject(spec['boundObjectRef']) ? spec['boundObjectRef'] : null
  // Whole seconds, as metav1.Time is written; taken before signing, so the status never promises longer than the token lives.
  const issuedAt = Math.floor(call.now.getTime() / 1000) * 1000
  const creationTimestamp = new Date(issuedAt).toISOString().replace(/\.\d{3}Z$/, 'Z')
  const checked: KubeObject = {
    ...request,
    metadata: { ...metadata, name, namespace, creationTimestamp },
    spec: { ...spec, audiences, expirationSeconds },
    status: {},
  }

  const errors = []
  const expPath = fieldPath('spec').child('expirationSeconds')
  if (expirationSeconds < MIN_EXPIRATION_SECONDS) errors.push(invalid(expPath, expirationSeconds, 'may not specify a duration less than 10 minutes'))
  if (expirationSeconds > MAX_EXPIRATION_SECONDS) errors.push(invalid(expPath, expirationSeconds, 'may not specify a duration larger than 2^32 seconds'))
  if (errors.length) throw invalidError(GROUP, KIND, '', errors)
  if (call.admission) await call.admission.validate(structuredClone(checked))

  const bound = ref ? await boundObject(sources, namespace, name, ref) : {}
  if (config.maxExpirationSeconds > 0 && expirationSeconds > config.maxExpirationSeconds) {
    call.warnings.push(`requested expiration of ${expirationSeconds} seconds shortened to ${config.maxExpirationSeconds} seconds`)
    expirationSeconds = config.maxExpirationSeconds
  }
  // A pod's default projected token (3607s, for this API alone) lives a year but warns after the hour,
  // easing the move from legacy tokens (upstream's --service-account-extend-token-expiration).
  let lifetime = expirationSeconds
  let warnAfterSeconds = 0
  const forThisApi = audiences.every((a) => config.apiAudiences.includes(a))
  if (config.extendExpiration && bound.pod && expirationSeconds === WARN_ONLY_EXPIRATION_SECONDS && forThisApi) {
    warnAfterSeconds = expirationSeconds
    lifetime = config.extendedExpirationSeconds
  }
  const claims = boundTokenClaims({
    issuer: config.issuer,
    serviceAccount: { namespace, ...named(serviceAccount) },
    ...(bound.pod ? { pod: named(bound.pod) } : {}),
    ...(bound.secret ? { secret: named(bound.secret) } : {}),
    ...(bound.node ? { node: bound.node } : {}),
    audiences,
    expirationSeconds: lifetime,
    warnAfterSeconds,
    now: call.now,
    jti: crypto.randomUUID(),
  })
  const token = await config.sign(claims).catch((err: unknown) => {
    throw internalError(new Error(`failed to generate token: ${(err as Error).message}`))
  })
  return {
    kind: KIND,
    apiVersion: `${GROUP}/v1`,
    metadata: checked.metadata,
    spec: { audiences, expirationSeconds, boundObjectRef: ref },
    status: { token, expirationTimestamp: new Date(issuedAt + expirationSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z') },
  }
}
