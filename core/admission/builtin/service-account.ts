/**
 * ServiceAccount: a pod runs as a ServiceAccount that exists (`default`
 * when it names none); unless the pod or the account opts out, each
 * container mounts the projected `kube-api-access-<random>` volume (a
 * bound token, the cluster CA and the namespace) at upstream's path; a pod
 * without image pull secrets gets the account's; an account annotated
 * `kubernetes.io/enforce-mountable-secrets: "true"` limits the secrets the
 * pod may use to the ones it lists. Mirror pods (from a node's manifests)
 * may reference no account, secret or token.
 */
import { isPlainObject } from '../../machinery/object.js'
import type { KubeObject } from '../../machinery/object.js'
import type { AdmissionAttributes } from '../attributes.js'

import type { ObjectReader } from '../../client/informer.js'
import { type BothPhases, objects, type Obj, on, podSpecOf, refuse } from './pods.js'
import { appendAll } from '../../machinery/append-all.js'
import { type Checkpointed, checkpointDue, runAtOnceOrInSlices } from '../../machinery/time-slice.js'

export const DEFAULT_SERVICE_ACCOUNT = 'default'
export const TOKEN_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount'
export const TOKEN_VOLUME_PREFIX = 'kube-api-access-'
const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror'
const ENFORCE_MOUNTABLE_SECRETS = 'kubernetes.io/enforce-mountable-secrets'
/** Upstream's bound token lifetime for the projected volume: an hour and a few seconds, so that its use after an hour can be told. */
const TOKEN_EXPIRATION_SECONDS = 3607
/** The characters and length of upstream's generated name suffixes. */
const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789'
const NAME_SUFFIX_LENGTH = 5

export function randomSuffix(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(NAME_SUFFIX_LENGTH))
  return [...bytes].map((b) => NAME_ALPHABET[b % NAME_ALPHABET.length]).join('')
}

/** The projected volume upstream mounts in place of a token secret. */
export function tokenVolume(name: string): Obj {
  return {
    name,
    projected: {
      defaultMode: 0o644,
      sources: [
        { serviceAccountToken: { path: 'token', expirationSeconds: TOKEN_EXPIRATION_SECONDS } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
    },
  }
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '')
const isMirrorPod = (pod: KubeObject): boolean => pod.metadata.annotations?.[MIRROR_POD_ANNOTATION] !== undefined
const containers = (spec: Obj, field: string) => objects(spec[field])

/** The pod's preference, then the account's, else mount (upstream's shouldAutomount). */
function automount(account: KubeObject, spec: Obj): boolean {
  if (typeof spec['automountServiceAccountToken'] === 'boolean') return spec['automountServiceAccountToken']
  if (typeof account['automountServiceAccountToken'] === 'boolean') return account['automountServiceAccountToken']
  return true
}

/** Mounts the token volume in each container, in checkpointed steps: a pod holds as many containers as a body allows. */
function* mountToken(spec: Obj, nextSuffix: () => string): Checkpointed<void> {
  const volumes = objects(spec['volumes'])
  const existing = volumes.find((v) => str(v['name']).startsWith(TOKEN_VOLUME_PREFIX))
  const volumeName = existing ? str(existing['name']) : `${TOKEN_VOLUME_PREFIX}${nextSuffix()}`
  let needed = false
  for (const field of ['initContainers', 'containers']) {
    for (const c of containers(spec, field)) {
      const mounts = objects(c['volumeMounts'])
      // A mount already at the path (the user's own token) wins.
      if (mounts.some((m) => m['mountPath'] === TOKEN_MOUNT_PATH)) continue
      c['volumeMounts'] = [...mounts, { name: volumeName, readOnly: true, mountPath: TOKEN_MOUNT_PATH }]
      needed = true
      if (checkpointDue()) yield
    }
  }
  if (needed && !existing) spec['volumes'] = [...volumes, tokenVolume(volumeName)]
}

/** Every secret a pod names, for the mirror-pod rule. */
function secretNames(spec: Obj): string[] {
  const names = objects(spec['imagePullSecrets']).map((s) => str(s['name']))
  for (const v of objects(spec['volumes'])) {
    if (isPlainObject(v['secret'])) names.push(str(v['secret']['secretName']))
    const projected = v['projected']
    if (isPlainObject(projected)) for (const s of objects(projected['sources'])) if (isPlainObject(s['secret'])) names.push(str(s['secret']['name']))
  }
  for (const field of ['initContainers', 'containers', 'ephemeralContainers'])
    for (const c of containers(spec, field)) appendAll(names, envSecrets(c).map((e) => e.secret))
  return names
}

/** The secrets a container's environment reads, with the variable (undefined for envFrom). */
function envSecrets(c: Obj): { env?: string; secret: string }[] {
  const found: { env?: string; secret: string }[] = []
  for (const e of objects(c['env'])) {
    const from = e['valueFrom']
    if (isPlainObject(from) && isPlainObject(from['secretKeyRef'])) found.push({ env: str(e['name']), secret: str(from['secretKeyRef']['name']) })
  }
  for (const e of objects(c['envFrom'])) if (isPlainObject(e['secretRef'])) found.push({ secret: str(e['secretRef']['name']) })
  return found
}

function mirrorPodProblem(spec: Obj): string | undefined {
  if (str(spec['serviceAccountName'])) return 'a mirror pod may not reference service accounts'
  if (secretNames(spec).length) return 'a mirror pod may not reference secrets'
  for (const v of objects(spec['volumes'])) {
    const projected = v['projected']
    if (!isPlainObject(projected)) continue
    for (const s of objects(projected['sources'])) {
      if (s['serviceAccountToken']) return 'a mirror pod may not use ServiceAccountToken volume projections'
      if (s['clusterTrustBundle']) return 'a mirror pod may not use ClusterTrustBundle volume projections'
    }
  }
  return undefined
}

const CONTAINER_WORDS: Record<string, string> = { initContainers: 'init container', containers: 'container', ephemeralContainers: 'ephemeral container' }

/** Why the pod may not use a secret its account does not list; undefined when it may. */
function secretReferenceProblem(account: KubeObject, spec: Obj, fields: readonly string[], withVolumes: boolean): string | undefined {
  const sa = account.metadata.name ?? ''
  const mountable = new Set(objects(account['secrets']).map((s) => str(s['name'])))
  const tail = `is not allowed because service account ${sa} does not reference that secret`
  if (withVolumes) {
    for (const v of objects(spec['volumes'])) {
      if (!isPlainObject(v['secret'])) continue
      const name = str(v['secret']['secretName'])
      if (!mountable.has(name)) return `volume with secret.secretName="${name}" ${tail}`
    }
  }
  for (const field of fields) {
    for (const c of containers(spec, field)) {
      for (const { env, secret } of envSecrets(c)) {
        if (mountable.has(secret)) continue
        const what = env === undefined ? 'envFrom' : `envVar ${env}`
        return `${CONTAINER_WORDS[field] ?? field} ${str(c['name'])} with ${what} referencing secret.secretName="${secret}" ${tail}`
      }
    }
  }
  if (!withVolumes) return undefined
  const pullable = new Set(objects(account['imagePullSecrets']).map((s) => str(s['name'])))
  for (const [i, ref] of objects(spec['imagePullSecrets']).entries()) {
    const name = str(ref['name'])
    if (!pullable.has(name)) return `imagePullSecrets[${i}].name="${name}" is not allowed because service account ${sa} does not reference that imagePullSecret`
  }
  return undefined
}

const enforcesMountableSecrets = (account: KubeObject): boolean =>
  ['1', 't', 'T', 'true', 'TRUE', 'True'].includes(account.metadata.annotations?.[ENFORCE_MOUNTABLE_SECRETS] ?? '')

export interface ServiceAccountPluginOptions {
  /** How long to wait between reads of a `default` account the index lacks (its controller may be about to create it). */
  retryDelayMs?: () => number
  nextSuffix?: () => string
}

/** Upstream reads a missing `default` account ten times before giving up, the others once. */
const DEFAULT_ACCOUNT_ATTEMPTS = 10

export function serviceAccount(accounts: ObjectReader, opts: ServiceAccountPluginOptions = {}): BothPhases {
  const delay = opts.retryDelayMs ?? (() => 100 + Math.floor(Math.random() * 100))
  const nextSuffix = opts.nextSuffix ?? randomSuffix

  const lookUp = async (a: AdmissionAttributes, name: string): Promise<KubeObject> => {
    const attempts = name === DEFAULT_SERVICE_ACCOUNT ? DEFAULT_ACCOUNT_ATTEMPTS : 1
    for (let i = 0; i < attempts; i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, delay()))
      const found = await accounts.read(a.namespace, name)
      if (found) return found
    }
    throw refuse(a, `error looking up service account ${a.namespace}/${name}: serviceaccount "${name}" not found`)
  }

  return {
    name: 'ServiceAccount',
    handles: on('CREATE', 'UPDATE'),
    async admit(a: AdmissionAttributes) {
      const spec = a.operation === 'CREATE' ? podSpecOf(a) : undefined
      if (!spec || !a.object || isMirrorPod(a.object)) return
      // v1 still mirrors the deprecated field, and a pod naming its account only there means that account.
      if (!str(spec['serviceAccountName'])) spec['serviceAccountName'] = spec['serviceAccount'] = str(spec['serviceAccount']) || DEFAULT_SERVICE_ACCOUNT
      const account = await lookUp(a, str(spec['serviceAccountName']))
      if (automount(account, spec)) await runAtOnceOrInSlices(mountToken(spec, nextSuffix))
      if (objects(spec['imagePullSecrets']).length === 0 && objects(account['imagePullSecrets']).length > 0)
        spec['imagePullSecrets'] = objects(account['imagePullSecrets']).map((s) => ({ name: str(s['name']) }))
    },
    async validate(a: AdmissionAttributes) {
      const ephemeral = a.operation === 'UPDATE' && a.subresource === 'ephemeralcontainers'
      const spec = podSpecOf(a, ['ephemeralcontainers'])
      if (!spec || !a.object || (a.operation !== 'CREATE' && !ephemeral) || (a.operation === 'CREATE' && a.subresource)) return
      if (ephemeral) {
        const account = await accounts.read(a.namespace, str(spec['serviceAccountName']))
        if (!account || !enforcesMountableSecrets(account)) return
        const problem = secretReferenceProblem(account, spec, ['ephemeralContainers'], false)
        if (problem) throw refuse(a, problem)
        return
      }
      if (isMirrorPod(a.object)) {
        const problem = mirrorPodProblem(spec)
        if (problem) throw refuse(a, problem)
        return
      }
      const name = str(spec['serviceAccountName'])
      if (!name) throw refuse(a, `no service account specified for pod ${a.namespace}/${a.object.metadata.name ?? a.name}`)
      const account = await lookUp(a, name)
      if (!enforcesMountableSecrets(account)) return
      const problem = secretReferenceProblem(account, spec, ['initContainers', 'containers'], true)
      if (problem) throw refuse(a, problem)
    },
  }
}
