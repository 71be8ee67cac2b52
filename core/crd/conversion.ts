/**
 * How a custom resource served in one version is kept in the CRD's storage
 * version: the `VersionConversion` the converting storage applies.
 *
 * Stored objects may be in any version the CRD ever stored in (the storage
 * version moves over time), so reading converts from the object's own
 * apiVersion, and an object already in the wanted version is left alone.
 * Strategy None changes only apiVersion (upstream's nopConverter). Strategy
 * Webhook asks the CRD's conversion webhook with a ConversionReview and
 * checks its answer as upstream's webhook converter does; every failure is a
 * 500 Internal error worded as upstream's.
 */
import { internalError } from '../machinery/status-error.js'
import type { CustomResourceDefinition, ServiceReference, WebhookClientConfig } from '../resources/apiextensions/types.js'
import { storageVersionOf } from '../resources/apiextensions/types.js'
import type { VersionConversion } from '../resources/catalogue.js'
import { isPlainObject, type KubeObject } from '../machinery/object.js'
import { aggregateText, fieldPath } from '../machinery/field.js'
import { goTypeName } from '../machinery/go-format.js'
import { validateAnnotations, validateLabels } from '../validation/object-meta.js'
import { CONVERSION_WEBHOOK_TIMEOUT_MS, fetchWebhookClient, type WebhookClient, type WebhookTarget } from './webhook-client.js'

export interface ConversionDeps {
  /** Calls the webhook; default: `fetchWebhookClient()` (no caBundle trust). */
  client?: WebhookClient
  /** Turns a `service` reference into the base URL that reaches it; without it such webhooks fail. */
  resolveService?: (ref: ServiceReference) => Promise<string>
  /** @default 30000, upstream's timeout for conversion webhooks */
  timeoutMs?: number
  /** The review's uid; @default crypto.randomUUID */
  newUID?: () => string
}

const REVIEW_GROUP_VERSION = 'apiextensions.k8s.io/v1'
const SUPPORTED_REVIEW_VERSIONS = new Set(['v1', 'v1beta1'])

function apiVersionOf(group: string, version: string): string {
  return group ? `${group}/${version}` : version
}

/** Go's GroupVersionKind.String(): `group/version, Kind=kind` (`/v1, Kind=Pod` for the core group). */
function gvkText(apiVersion: unknown, kind: unknown): string {
  const av = typeof apiVersion === 'string' ? apiVersion : ''
  const slash = av.indexOf('/')
  const [group, version] = slash >= 0 ? [av.slice(0, slash), av.slice(slash + 1)] : ['', av]
  return `${group}/${version}, Kind=${typeof kind === 'string' ? kind : ''}`
}

function withAPIVersion(obj: KubeObject, apiVersion: string): KubeObject {
  return obj.apiVersion === apiVersion ? obj : { ...obj, apiVersion }
}

/** An object of only apiVersion and kind converts to itself; upstream never sends those to a webhook. */
function isEmptyObject(obj: KubeObject): boolean {
  const keys = Object.keys(obj)
  return keys.length === 2 && 'apiVersion' in obj && 'kind' in obj
}

/**
 * The VersionConversion of one served version of `crd`. Selectors see the
 * stored object under the served apiVersion (`forSelection`); for a webhook
 * conversion a selectable field that the webhook renames or reshapes is
 * thus read in its stored shape (upstream reads it in the served one).
 */
export function customResourceConversion(
  crd: CustomResourceDefinition,
  servedVersion: string,
  deps: ConversionDeps = {},
): VersionConversion {
  const group = crd.spec.group
  const served = apiVersionOf(group, servedVersion)
  const storage = apiVersionOf(group, storageVersionOf(crd)?.name ?? servedVersion)
  const forSelection = (stored: KubeObject) => withAPIVersion(stored, served)
  if (crd.spec.conversion?.strategy !== 'Webhook') {
    return {
      storageVersion: storage,
      toStorage: (obj) => withAPIVersion(obj, storage),
      fromStorage: forSelection,
      forSelection,
    }
  }
  const webhook = new WebhookConverter(crd, deps)
  return {
    storageVersion: storage,
    toStorage: (obj) => webhook.convert(obj, storage),
    fromStorage: (obj) => webhook.convert(obj, served),
    forSelection,
    fromStorageAll: (objs) => webhook.convertAll(objs, served),
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

/** Calls one CRD's conversion webhook and checks what comes back. */
class WebhookConverter {
  private readonly client: WebhookClient
  private readonly timeoutMs: number
  private readonly newUID: () => string
  private readonly config: WebhookClientConfig | undefined
  private readonly reviewVersion: string | undefined
  private readonly listKind: string

  constructor(
    crd: CustomResourceDefinition,
    private readonly deps: ConversionDeps,
  ) {
    this.client = deps.client ?? fetchWebhookClient()
    this.timeoutMs = deps.timeoutMs ?? CONVERSION_WEBHOOK_TIMEOUT_MS
    this.newUID = deps.newUID ?? (() => crypto.randomUUID())
    const webhook = crd.spec.conversion?.webhook
    this.config = webhook?.clientConfig
    // The first version of the CRD's list that this server speaks, as upstream picks.
    this.reviewVersion = (webhook?.conversionReviewVersions ?? []).find((v) => SUPPORTED_REVIEW_VERSIONS.has(v))
    this.listKind = crd.spec.names.listKind ?? `${crd.spec.names.kind}List`
  }

  /** One object into `desired`; at once when nothing is to be done. */
  convert(obj: KubeObject, desired: string): KubeObject | Promise<KubeObject> {
    if (obj.apiVersion === desired) return obj
    if (isEmptyObject(obj)) return withAPIVersion(obj, desired)
    return this.convertOne(obj, desired)
  }

  private async convertOne(obj: KubeObject, desired: string): Promise<KubeObject> {
    const subject = gvkText(obj.apiVersion, obj.kind)
    const converted = await this.review([obj], desired, subject)
    if (converted.length !== 1) throw internalError(`conversion webhook for ${subject} returned ${converted.length} objects, expected 1`)
    return checkConverted(obj, converted[0], desired, {
      shape: `conversion webhook for ${subject} returned invalid object at index 0`,
      identity: `conversion webhook for ${subject} returned invalid object`,
      metadata: `conversion webhook for ${subject} returned invalid metadata`,
    })
  }

  /**
   * Many objects into `desired` with one review: those already in `desired`
   * are not sent and keep their place among the converted ones.
   */
  async convertAll(objs: readonly KubeObject[], desired: string): Promise<KubeObject[]> {
    const sent = objs.filter((o) => o.apiVersion !== desired)
    if (!sent.length) return [...objs]
    const subject = gvkText(desired, this.listKind)
    const converted = await this.review(sent, desired, subject)
    if (converted.length !== sent.length) {
      throw internalError(`conversion webhook for ${subject} returned ${converted.length} objects, expected ${sent.length}`)
    }
    let next = 0
    return objs.map((original) => {
      if (original.apiVersion === desired) return original
      const i = next++
      // Upstream counts the index from 1 in these messages (it moves on before checking); kept for the same text.
      const at = `conversion webhook for ${subject} returned invalid converted object at index ${i + 1}`
      return checkConverted(original, converted[i], desired, {
        shape: at,
        identity: at,
        metadata: `conversion webhook for ${subject} returned invalid metadata in object at index ${i + 1}`,
      })
    })
  }

  /** Sends the review and answers the converted objects of a successful response. */
  private async review(objects: readonly KubeObject[], desired: string, subject: string): Promise<unknown[]> {
    const version = this.reviewVersion
    if (!version) throw internalError('no supported conversion review versions')
    const uid = this.newUID()
    let reply: unknown
    try {
      const target = await this.target()
      const body = {
        kind: 'ConversionReview',
        apiVersion: `apiextensions.k8s.io/${version}`,
        request: { uid, desiredAPIVersion: desired, objects },
      }
      reply = await this.client.post(target, body, this.timeoutMs)
    } catch (err) {
      throw internalError(`conversion webhook for ${subject} failed: ${messageOf(err)}`)
    }
    try {
      return convertedObjectsOf(reply, version, uid)
    } catch (err) {
      throw internalError(`conversion webhook for ${subject} failed: ${messageOf(err)}`)
    }
  }

  private async target(): Promise<WebhookTarget> {
    const config = this.config
    if (!config) throw new Error('the CustomResourceDefinition names no conversion webhook clientConfig')
    const caBundle = config.caBundle ? { caBundle: config.caBundle } : {}
    // As for admission webhooks: a URL over the control plane's egress, a service over the cluster's.
    if (config.url) return { url: config.url, ...caBundle, egress: 'controlplane' }
    const service = config.service
    if (!service) throw new Error('the conversion webhook clientConfig has neither url nor service')
    if (!this.deps.resolveService) {
      throw new Error(`cannot reach service ${service.namespace}/${service.name}: no service resolver is configured`)
    }
    const base = (await this.deps.resolveService(service)).replace(/\/+$/, '')
    return { url: base + (service.path ?? ''), ...caBundle, serverName: `${service.name}.${service.namespace}.svc`, egress: 'cluster' }
  }
}

/** The checks of upstream's response reading; a v1beta1 review skips the kind and uid checks, as upstream. */
function convertedObjectsOf(reply: unknown, version: string, uid: string): unknown[] {
  if (!isPlainObject(reply)) throw new Error('the response body is not a ConversionReview object')
  if (version === 'v1' && (reply['apiVersion'] !== REVIEW_GROUP_VERSION || reply['kind'] !== 'ConversionReview')) {
    throw new Error(
      `expected webhook response of ${gvkText(REVIEW_GROUP_VERSION, 'ConversionReview')}, got ${gvkText(reply['apiVersion'], reply['kind'])}`,
    )
  }
  const response = reply['response']
  if (!isPlainObject(response)) throw new Error('no response provided')
  if (version === 'v1' && response['uid'] !== uid) {
    throw new Error(`expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(stringOr(response['uid']))}`)
  }
  const result = isPlainObject(response['result']) ? response['result'] : {}
  if (result['status'] !== 'Success') {
    const message = stringOr(result['message'])
    if (message) throw new Error(message)
    throw new Error(`response.result.status was '${stringOr(result['status'])}', not 'Success'`)
  }
  const converted = response['convertedObjects']
  return Array.isArray(converted) ? converted : []
}

function stringOr(value: unknown): string {
  return typeof value === 'string' ? value : ''
}

interface Wording {
  /** Before the apiVersion and kind checks. */
  shape: string
  /** Before the kind, name, namespace and uid checks. */
  identity: string
  /** Before the labels and annotations checks. */
  metadata: string
}

/**
 * A converted object must be in the desired version, of the same kind and
 * the same object; it keeps the original's metadata but for the labels and
 * annotations the webhook may change.
 */
function checkConverted(original: KubeObject, item: unknown, desired: string, words: Wording): KubeObject {
  if (!isPlainObject(item)) throw internalError(`${words.shape}: the converted object is of type ${goTypeName(item)}, not an object`)
  const got = stringOr(item['apiVersion'])
  if (got !== desired) throw internalError(`${words.shape}: invalid groupVersion (expected ${desired}, received ${got})`)
  const kind = stringOr(original.kind)
  if (stringOr(item['kind']) !== kind) throw internalError(`${words.shape}: invalid kind (expected ${kind}, received ${stringOr(item['kind'])})`)
  const converted = item as KubeObject
  const sameness = identityProblem(original, converted)
  if (sameness) throw internalError(`${words.identity}: ${sameness}`)
  try {
    return { ...converted, metadata: restoredMetadata(original, converted) }
  } catch (err) {
    throw internalError(`${words.metadata}: ${messageOf(err)}`)
  }
}

function metaString(obj: KubeObject, field: 'name' | 'namespace' | 'uid'): string {
  return isPlainObject(obj.metadata) ? stringOr(obj.metadata[field]) : ''
}

function identityProblem(original: KubeObject, converted: KubeObject): string | undefined {
  const checks: [string, unknown, unknown][] = [
    ['kind', original.kind, converted.kind],
    ['name', metaString(original, 'name'), metaString(converted, 'name')],
    ['namespace', metaString(original, 'namespace'), metaString(converted, 'namespace')],
    ['UID', metaString(original, 'uid'), metaString(converted, 'uid')],
  ]
  for (const [what, before, after] of checks) {
    if (before !== after) return `must have the same ${what}: ${String(before ?? '')} != ${String(after ?? '')}`
  }
  return undefined
}

/** The original's metadata with the converted object's labels and annotations, checked when changed. */
function restoredMetadata(original: KubeObject, converted: KubeObject): KubeObject['metadata'] {
  const answered: unknown = converted.metadata
  if (answered === undefined) throw new Error('missing metadata in converted object')
  if (!isPlainObject(answered)) throw new Error(`invalid metadata of type ${goTypeName(answered)} in converted object`)
  const meta = structuredClone(original.metadata ?? {}) as Record<string, unknown>
  for (const field of ['labels', 'annotations'] as const) {
    const value = answered[field]
    if (value === undefined || value === null) {
      delete meta[field]
      continue
    }
    if (!isPlainObject(value)) throw new Error(`invalid metadata.${field} of type ${goTypeName(value)} in converted object`)
    const before = meta[field]
    if (before !== undefined && before !== null && !isPlainObject(before)) {
      throw new Error(`invalid metadata.${field} of type ${goTypeName(before)} in original object`)
    }
    const previous = (before ?? {}) as Record<string, unknown>
    let changed = Object.keys(previous).length !== Object.keys(value).length
    for (const [key, v] of Object.entries(value)) {
      if (typeof v !== 'string') throw new Error(`metadata.${field}[${key}] must be a string, but is ${goTypeName(v)} in converted object`)
      if (previous[key] !== v) changed = true
    }
    if (changed) {
      // Upstream names the annotations' path `metadata.annotation`.
      const errs =
        field === 'labels'
          ? validateLabels(value, fieldPath('metadata').child('labels'))
          : validateAnnotations(value, fieldPath('metadata').child('annotation'))
      if (errs.length) throw new Error(aggregateText(errs))
    }
    meta[field] = value
  }
  return meta as KubeObject['metadata']
}
