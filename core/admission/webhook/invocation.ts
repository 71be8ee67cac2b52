/**
 * Whether a webhook is called for a request, and as which resource and
 * version (upstream's ShouldCallHook): its namespaceSelector against the
 * namespace's labels, its objectSelector against the new or the old
 * object's labels, its rules against the request's resource (or, with
 * `matchPolicy: Equivalent`, against an equivalent resource, which the
 * request is then converted to), and last its match conditions.
 */
import type { Authorizer } from '../../authz/authorizer.js'
import { forbidden, internalError, StatusError } from '../../machinery/status-error.js'
import type { Metrics } from '../../metrics/metrics.js'
import type { Logger } from '../../logging/logger.js'
import type { LabelSelector } from '../../machinery/label-selector.js'
import type { StoredObjects } from '../../client/stored-objects.js'
import type { Catalogue, ResourceEntry } from '../../resources/catalogue.js'
import type { KubeObject } from '../../machinery/object.js'
import type { AdmissionAttributes } from '../attributes.js'
import type { CallDeps } from './call.js'
import { CelAuthorizer } from './cel-authorizer.js'
import type { WebhookIndex } from './configuration-index.js'
import { conditionInput, evaluateMatchConditions } from './match-conditions.js'
import { type AdmissionRequest, operationOptions, userInfoOf } from './review.js'
import { ruleMatches, type RuleTarget } from './rules.js'
import { carriesResourceKind, convertObject, equivalentEntries, kindOf, resourceOf } from './versions.js'
import type { AdmissionWebhook } from './webhook.js'

export interface WebhookDeps extends CallDeps {
  catalogue: Catalogue
  /** Where a namespace the index has not seen yet is read. */
  stored: StoredObjects
  authorizer: Authorizer
  index: WebhookIndex
  logger: Logger
  /** Where each call is counted and timed (core/admission/webhook/call-metrics.ts); none: not recorded. */
  metrics?: Metrics
}

/** A webhook to call, and the entry whose version it sees the request in. */
export interface Invocation {
  hook: AdmissionWebhook
  entry: ResourceEntry
}

const isNamespaceRequest = (a: AdmissionAttributes): boolean => a.entry.group === '' && a.entry.resource === 'namespaces'

function ruleTarget(a: AdmissionAttributes, entry: ResourceEntry): RuleTarget {
  return {
    operation: a.operation,
    group: entry.group,
    version: entry.version,
    resource: entry.resource,
    subresource: a.subresource ?? '',
    // Upstream's attributes of a namespace object carry its name as their namespace.
    namespace: isNamespaceRequest(a) ? a.name : a.namespace,
  }
}

/** The entry the webhook's rules select: the request's own, else (Equivalent) the first equivalent one an earlier rule selects. */
function matchedEntry(hook: AdmissionWebhook, a: AdmissionAttributes, catalogue: Catalogue): ResourceEntry | undefined {
  if (hook.rules.some((r) => ruleMatches(r, ruleTarget(a, a.entry)))) return a.entry
  if (hook.matchPolicy !== 'Equivalent') return undefined
  const equivalents = equivalentEntries(catalogue, a.entry, a.subresource)
  for (const rule of hook.rules) {
    const hit = equivalents.find((e) => ruleMatches(rule, ruleTarget(a, e)))
    if (hit) return hit
  }
  return undefined
}

function parsed(selector: LabelSelector | { error: string }): LabelSelector {
  if ('error' in selector) throw internalError(selector.error)
  return selector
}

async function namespaceLabels(a: AdmissionAttributes, deps: WebhookDeps): Promise<Record<string, string> | undefined> {
  // A namespace being written carries its own labels; the index has not seen them yet.
  if (isNamespaceRequest(a) && !a.subresource && (a.operation === 'CREATE' || a.operation === 'UPDATE')) return a.object?.metadata.labels ?? {}
  const name = isNamespaceRequest(a) ? a.name : a.namespace
  const known = deps.index.namespaceLabels(name)
  if (known) return known
  // The index may lag a namespace created a moment ago: storage decides, and a missing namespace is a 404 as upstream's.
  const entry = deps.catalogue.lookup('', 'v1', 'namespaces')
  if (!entry) return undefined
  const namespace = await deps.stored.get(entry, '', name)
  return namespace.metadata.labels ?? {}
}

async function namespaceSelected(hook: AdmissionWebhook, a: AdmissionAttributes, deps: WebhookDeps): Promise<boolean> {
  // A cluster-scoped object other than a namespace is never excluded by namespace.
  if (!a.namespace && !isNamespaceRequest(a)) return true
  const selector = parsed(hook.namespaceSelector)
  if (selector.empty) return true
  return selector.matches(await namespaceLabels(a, deps))
}

function objectSelected(hook: AdmissionWebhook, a: AdmissionAttributes): boolean {
  const selector = parsed(hook.objectSelector)
  if (selector.empty) return true
  const labelsOf = (o: KubeObject | undefined) => (o ? selector.matches(o.metadata?.labels ?? {}) : false)
  return labelsOf(a.object) || labelsOf(a.oldObject)
}

/**
 * The request's objects in the versions webhooks ask for, converted once
 * per version. A mutating plugin replaces `object` as webhooks patch it.
 */
export class VersionedObjects {
  private readonly olds = new Map<ResourceEntry, KubeObject | undefined>()
  /** The object as the last webhook left it, in `entry`'s version. */
  current: { entry: ResourceEntry; object: KubeObject | undefined }

  constructor(private readonly a: AdmissionAttributes) {
    this.current = { entry: a.entry, object: a.object }
  }

  private converts(): boolean {
    return carriesResourceKind(this.a.entry, this.a.subresource)
  }

  async objectIn(entry: ResourceEntry): Promise<KubeObject | undefined> {
    const { current } = this
    if (current.entry === entry || !current.object || !this.converts()) return current.object
    this.current = { entry, object: await convertObject(current.object, current.entry, entry) }
    return this.current.object
  }

  async oldObjectIn(entry: ResourceEntry): Promise<KubeObject | undefined> {
    const old = this.a.oldObject
    if (!old || entry === this.a.entry || !this.converts()) return old
    if (!this.olds.has(entry)) this.olds.set(entry, await convertObject(old, this.a.entry, entry))
    return this.olds.get(entry)
  }

  /** The object in the request's own version, for the chain to go on with. */
  async final(): Promise<KubeObject | undefined> {
    return this.objectIn(this.a.entry)
  }
}

/** The AdmissionRequest for an invocation; `uid` is new for each call. */
export async function admissionRequest(a: AdmissionAttributes, invocation: Invocation, objects: VersionedObjects, uid: string): Promise<AdmissionRequest> {
  const { entry } = invocation
  return {
    uid,
    kind: kindOf(entry, a.subresource),
    resource: resourceOf(entry),
    ...(a.subresource ? { subResource: a.subresource } : {}),
    requestKind: kindOf(a.entry, a.subresource),
    requestResource: resourceOf(a.entry),
    ...(a.subresource ? { requestSubResource: a.subresource } : {}),
    name: a.name,
    namespace: a.namespace,
    operation: a.operation,
    userInfo: userInfoOf(a.user),
    object: (await objects.objectIn(entry)) ?? null,
    oldObject: (await objects.oldObjectIn(entry)) ?? null,
    dryRun: a.dryRun,
    options: operationOptions(a.operation, a.options),
  }
}

/** The request as match conditions see it: every declared field present. */
function celRequest(request: AdmissionRequest): Record<string, unknown> {
  return {
    ...request,
    subResource: request.subResource ?? '',
    requestSubResource: request.requestSubResource ?? '',
    name: request.name ?? '',
    namespace: request.namespace ?? '',
    userInfo: { username: '', uid: '', groups: [], extra: {}, ...request.userInfo },
  }
}

/**
 * The invocation of `hook` for the request, or undefined when it is not
 * called. Throws the StatusError that refuses the request: a namespace that
 * does not exist (404), a match condition that fails under `Fail` (403).
 */
export async function invocationFor(hook: AdmissionWebhook, a: AdmissionAttributes, objects: VersionedObjects, deps: WebhookDeps): Promise<Invocation | undefined> {
  const entry = matchedEntry(hook, a, deps.catalogue)
  if (!entry) return undefined
  if (!(await namespaceSelected(hook, a, deps))) return undefined
  if (!objectSelected(hook, a)) return undefined
  const invocation = { hook, entry }
  if (!hook.matchConditions.length) return invocation
  let request: AdmissionRequest
  try {
    request = await admissionRequest(a, invocation, objects, '')
  } catch (err) {
    throw err instanceof StatusError ? err : internalError(err)
  }
  const version = kindOf(entry, a.subresource)
  const authorizer = new CelAuthorizer(
    { authorizer: deps.authorizer, user: a.user },
    { group: entry.group, version: version.version, resource: entry.resource, subresource: a.subresource ?? '', namespace: a.namespace, name: a.name },
  )
  const outcome = await evaluateMatchConditions(hook.matchConditions, conditionInput(request.object ?? undefined, request.oldObject ?? undefined, celRequest(request), authorizer))
  if ('error' in outcome) {
    if (hook.failurePolicy === 'Ignore') return undefined
    deps.logger.warn({ webhook: hook.name, err: outcome.error }, 'Failed evaluating match conditions, failing closed')
    throw forbidden({ group: a.entry.group, resource: a.entry.resource }, a.name, outcome.error)
  }
  return outcome.matches ? invocation : undefined
}
