/**
 * ImagePolicyWebhook (upstream: plugin/pkg/admission/imagepolicy): each pod
 * created or updated (and its ephemeralcontainers subresource) is described
 * to a backend as an `imagepolicy.k8s.io/v1alpha1` ImageReview: the images
 * of all its containers, its `*.image-policy.k8s.io/*` annotations and its
 * namespace. The backend's answer is cached (allowTTL, denyTTL); a backend
 * that cannot be reached, retried with the configured backoff, allows or
 * refuses as `defaultAllow` says. A refusal is 403 with upstream's words.
 *
 * The configuration comes from the AdmissionConfiguration file (`imagePolicy:
 * {kubeConfigFile, allowTTL, denyTTL, retryBackoff, defaultAllow}`); the
 * runtime reads the kubeconfig and hands the connection with it.
 */
import { type WebhookConnection, webhookTarget } from '../../authz/webhook.js'
import { isPlainObject } from '../../machinery/object.js'
import type { AdmissionAttributes } from '../attributes.js'
import { ConfigFileError } from '../../config/decode.js'
import type { AdmissionPluginContext } from '../plugins.js'
import type { ValidatingAdmission } from '../validating.js'
import { admissionForbidden, isResource } from './forbidden.js'

type Obj = Record<string, unknown>

/** The plugin's settings, durations in milliseconds, the kubeconfig already read into a connection. */
export interface ImagePolicySettings {
  connection: WebhookConnection
  allowTTLMs: number
  denyTTLMs: number
  retryBackoffMs: number
  defaultAllow: boolean
}

export interface ImagePolicyFile {
  kubeConfigFile: string
  allowTTLMs: number
  denyTTLMs: number
  retryBackoffMs: number
  defaultAllow: boolean
}

const SECOND = 1000
const MINUTE = 60 * SECOND

/**
 * One duration of the file as upstream normalises it: -1 turns it off (0),
 * 0 takes the default, anything else is in `unitMs` and must lie in (min, max].
 */
function duration(name: string, value: unknown, unitMs: number, minMs: number, maxMs: number, defaultMs: number, problems: string[]): number {
  if (value === undefined || value === 0) return defaultMs
  if (value === -1) return 0
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    problems.push(`imagePolicy.${name}: Invalid value: ${JSON.stringify(value)}: must be a whole number`)
    return defaultMs
  }
  const ms = value * unitMs
  if (ms <= minMs || ms > maxMs) problems.push(`imagePolicy.${name}: Invalid value: ${value}: valid value is between ${minMs}ms and ${maxMs}ms`)
  return ms
}

/** The plugin's configuration as the file gives it, checked as upstream's normalizeWebhookConfig; throws listing each problem. */
export function readImagePolicyFile(raw: unknown): ImagePolicyFile {
  const policy = isPlainObject(raw) && isPlainObject(raw['imagePolicy']) ? raw['imagePolicy'] : undefined
  if (!policy) throw new Error('ImagePolicyWebhook: the configuration has no imagePolicy section')
  const problems: string[] = []
  const kubeConfigFile = typeof policy['kubeConfigFile'] === 'string' ? policy['kubeConfigFile'] : ''
  if (!kubeConfigFile) problems.push('imagePolicy.kubeConfigFile: Required value')
  const settings: ImagePolicyFile = {
    kubeConfigFile,
    retryBackoffMs: duration('retryBackoff', policy['retryBackoff'], 1, 0, 5 * MINUTE, 500, problems),
    allowTTLMs: duration('allowTTL', policy['allowTTL'], SECOND, SECOND, 30 * MINUTE, 5 * MINUTE, problems),
    denyTTLMs: duration('denyTTL', policy['denyTTL'], SECOND, SECOND, 30 * MINUTE, 30 * SECOND, problems),
    defaultAllow: policy['defaultAllow'] === true,
  }
  if (problems.length) throw new Error(`ImagePolicyWebhook: ${problems.join('; ')}`)
  return settings
}

const isSettings = (c: unknown): c is ImagePolicySettings => isPlainObject(c) && isPlainObject(c['connection'])

/** The factory's configuration check: settings with the kubeconfig already read (the daemon reads it from `imagePolicy.kubeConfigFile`). */
export function decodeImagePolicySettings(raw: unknown, source: string): ImagePolicySettings {
  if (!isSettings(raw)) throw new ConfigFileError(source, 'ImagePolicyWebhook configuration', ['the ImagePolicyWebhook admission plugin needs a configuration (imagePolicy with kubeConfigFile in --admission-control-config-file)'])
  return raw
}

const CONTAINER_LISTS = ['containers', 'initContainers', 'ephemeralContainers'] as const
const CALL_TIMEOUT_MS = 30_000
const ATTEMPTS = 5
const CACHE_SIZE = 1024
/** Where the backend's audit annotations, and the failed-open mark, go in the request's audit event. */
const AUDIT_PREFIX = 'imagepolicywebhook.image-policy.k8s.io/'

function reviewSpec(a: AdmissionAttributes): Obj {
  const pod = a.object
  const spec = pod && isPlainObject(pod['spec']) ? pod['spec'] : {}
  const containers = CONTAINER_LISTS.flatMap((list) => (Array.isArray(spec[list]) ? (spec[list] as unknown[]) : [])).map((c) => ({
    image: isPlainObject(c) ? c['image'] : undefined,
  }))
  const annotations = Object.fromEntries(Object.entries(pod?.metadata.annotations ?? {}).filter(([key]) => key.includes('.image-policy.k8s.io/')))
  return { containers, ...(Object.keys(annotations).length ? { annotations } : {}), namespace: a.namespace }
}

interface ReviewStatus {
  allowed: boolean
  reason?: string
  auditAnnotations?: Record<string, string>
}

function statusOf(reply: unknown): ReviewStatus {
  const status = isPlainObject(reply) && isPlainObject(reply['status']) ? reply['status'] : undefined
  if (!status || typeof status['allowed'] !== 'boolean') throw new Error('the backend answered no ImageReview status')
  return {
    allowed: status['allowed'],
    ...(typeof status['reason'] === 'string' ? { reason: status['reason'] } : {}),
    ...(isPlainObject(status['auditAnnotations']) ? { auditAnnotations: status['auditAnnotations'] as Record<string, string> } : {}),
  }
}

export function imagePolicyWebhook({ configuration: settings, webhookClient, now, logger }: AdmissionPluginContext & { configuration: ImagePolicySettings }): ValidatingAdmission {
  const endpoint = webhookTarget(settings.connection)
  const cache = new Map<string, { status: ReviewStatus; expiresAt: number }>()
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

  const ask = async (spec: Obj): Promise<ReviewStatus> => {
    const body = { apiVersion: 'imagepolicy.k8s.io/v1alpha1', kind: 'ImageReview', spec }
    let backoff = settings.retryBackoffMs
    for (let attempt = 1; ; attempt += 1) {
      try {
        return statusOf(await webhookClient.post(endpoint, body, CALL_TIMEOUT_MS))
      } catch (err) {
        if (attempt >= ATTEMPTS) throw err
        await sleep(backoff)
        backoff *= 1.5
      }
    }
  }

  const plugin: ValidatingAdmission = {
    name: 'ImagePolicyWebhook',
    handles: (operation) => operation === 'CREATE' || operation === 'UPDATE',
    async validate(a) {
      if (!isResource(a, '', 'pods') && !isResource(a, '', 'pods', 'ephemeralcontainers')) return
      const spec = reviewSpec(a)
      const key = JSON.stringify(spec)
      const hit = cache.get(key)
      let status = hit && hit.expiresAt > now().getTime() ? hit.status : undefined
      if (!status) {
        try {
          status = await ask(spec)
        } catch (err) {
          const reason = err instanceof Error ? err.message : String(err)
          logger.warn({ err: reason, defaultAllow: settings.defaultAllow }, 'error contacting the image policy webhook backend')
          if (settings.defaultAllow) {
            if (a.auditAnnotations) a.auditAnnotations[`${AUDIT_PREFIX}failed-open`] = 'true'
            return
          }
          throw admissionForbidden(a, reason)
        }
        const ttl = status.allowed ? settings.allowTTLMs : settings.denyTTLMs
        if (ttl > 0) {
          if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string)
          cache.set(key, { status, expiresAt: now().getTime() + ttl })
        }
      }
      if (a.auditAnnotations) for (const [k, v] of Object.entries(status.auditAnnotations ?? {})) a.auditAnnotations[`${AUDIT_PREFIX}${k}`] = v
      if (!status.allowed)
        throw admissionForbidden(a, status.reason ? `image policy webhook backend denied one or more images: ${status.reason}` : 'one or more images rejected by webhook backend')
    },
  }
  return plugin
}
