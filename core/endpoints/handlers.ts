/**
 * HTTP to registry: turns one resource request (its request info already
 * computed) into a store call and the answer into the negotiated encoding.
 */
import { createTokenRequest, type TokenIssuerConfig } from '../authn/serviceaccount/token-request.js'
import { decodeBody, readAndDecodeObjectBody, readBodyBytes } from '../http/body.js'
import { APPLY_PATCH_TYPE, negotiateOutput, type OutputFormat, WATCH_STREAM_TYPES } from '../http/media-types.js'
import type { RequestInfo } from '../machinery/request-info.js'
import { attributesOf, type Authorizer } from '../authz/authorizer.js'
import { type FieldSelector, nameSelector } from '../machinery/field-selector.js'
import { typeForKind, typeTable } from '../resources/schema/index.js'
import { decodeAs } from '../resources/schema/json-decoding.js'
import type { YamlDecoder } from '../http/yaml-off-thread.js'
import { queryOf } from '../http/query.js'
import { listResponse, objectResponse, objectResponseInSteps, statusResponse } from '../http/respond.js'
import { hasMoreValuesThan } from '../machinery/json-size.js'
import { SLICED_WRITE_VALUES } from '../registry/write-steps.js'
import { isMarkedLarge } from '../machinery/large-objects.js'
import { badRequest, methodNotAllowed, notAcceptable, resourceNotFound, StatusError, type StatusReason, unsupportedMediaType } from '../machinery/status-error.js'
import { watchStream } from '../http/watch-stream.js'
import { groupVersion, type ResourceEntry, type Verb } from '../resources/catalogue.js'
import { cloneJson, isPlainObject, type KubeObject, type ObjectMeta, type UserInfo } from '../machinery/object.js'
import type { StorageEvent } from '../storage/interface.js'
import { resourceVersionSyntaxError } from '../storage/errors.js'
import { isDryRun } from '../registry/delete-options.js'
import { readDeleteOptions } from './delete-options.js'
import { evictionDeleteOptions, evictPod } from '../registry/eviction.js'
import { bindPod } from '../registry/pod-binding.js'
import { storedObjects } from '../registry/stored-objects.js'
import { getComponentStatus, listComponentStatuses } from './component-statuses.js'
import type { ComponentProbe } from '../resources/core/cluster-info.js'
import type { NodeAgentDeps } from '../nodeagent/connection.js'
import { handleNodeAgentSubresource, isNodeAgentSubresource } from '../nodeagent/subresources.js'
import type { PassUpgrade } from '../proxy/upgrade.js'
import { fieldValidationOf } from '../registry/field-validation.js'
import { parseListQuery } from '../registry/list-query.js'
import { managerName } from '../registry/managed-fields.js'
import { type PatchRequest, patchTypes, readPatch } from './patch-request.js'
import { getScale, patchedScale, updateScale } from '../registry/scale.js'
import { checkUpdateNames } from '../registry/preconditions.js'
import { isConnectSubresource } from './connect-options.js'
import { refuseUnroutableMedia } from './route-media.js'
import { admitConnect, tokenRequestAdmission } from './subresource-admission.js'
import { withWarnings } from '../http/warnings.js'
import type { Registry } from '../registry/registry.js'
import type { WatchMetrics } from '../metrics/watch-metrics.js'
import type { RequestContext } from '../registry/request-context.js'
import { type WriteOptionsKind, writeOptionsOf } from '../registry/write-options.js'
import type { ResourceStore } from '../registry/store.js'
import { type IncludeObject, tableRow, toTable, toTableInSlices } from '../registry/table.js'
import { partialMetadataMismatch, partialObjectMetadata, partialObjectMetadataList } from '../registry/partial-metadata.js'

export interface HandlerEnv {
  registry: Registry
  /** Asked again inside a request that may do more than its verb (an apply that creates); unset: such requests are not asked. */
  authorizer?: Authorizer | undefined
  user: UserInfo
  now: () => Date
  maxBodyBytes: number
  /** Where large YAML bodies are decoded (another thread); absent, on the serving thread. */
  yamlDecoder?: YamlDecoder | undefined
  minRequestTimeoutSeconds: number
  bookmarkIntervalMs: number
  /** Registers what to end at shutdown (every watch); returns the way to unregister it. */
  onShutdown(end: () => void): () => void
  /** What `serviceaccounts/<name>/token` signs with; absent, the subresource is not served. */
  serviceAccountTokens?: { issuerConfig(): Promise<TokenIssuerConfig> } | undefined
  /** Counts open watches and the events sent to them, by group, version and kind; none: not counted. */
  watchMetrics?: WatchMetrics
  /** The request's audit event annotations, when the audit policy records the request. */
  auditAnnotations?: Record<string, string>
  /** Tells the request's audit event the object a create or update decoded (its name, uid, resourceVersion). */
  auditRequestObject?: (obj: unknown) => void
  /** Authentication's warnings (a legacy token's): taken out, they lead the answer's own. */
  authWarnings?: string[] | undefined
  /** How node agents and the cluster network are reached; absent, logs, exec, attach, port-forward and proxy are not served. */
  nodeAgent?: NodeAgentDeps | undefined
  /** The runtime's hand-over of this request's connection, for exec, attach and port-forward upgrades. */
  passUpgrade?: PassUpgrade | undefined
  /** The client's address as the listener saw it (none for the embedding program's own calls): proxies name it onward. */
  remoteAddress?: string | undefined
  /** The release the server serves as (the emulated one, else its own): deprecation warnings follow it. */
  servedRelease?: { major: number; minor: number } | undefined
  /** What `componentstatuses` reports; absent, an empty list. */
  componentProbes?: readonly ComponentProbe[] | undefined
}

/**
 * The registry's context of one request: who, when, where admission may
 * annotate its audit event, and the warnings the answer carries (the
 * request's own list, which an error's answer carries too).
 */
function requestContext(env: HandlerEnv, warnings: string[]): RequestContext {
  const ctx: RequestContext = { user: env.user, now: env.now(), dryRun: false, warnings }
  if (env.auditAnnotations) ctx.auditAnnotations = env.auditAnnotations
  return ctx
}

/**
 * Reads what every write shares into `ctx`: dryRun, fieldValidation, and the
 * manager it is recorded under. Upstream takes these from the query alone
 * (a create's, update's or patch's body is the object), checked as its
 * Create/Update/PatchOptions.
 */
function writeContext(request: Request, params: URLSearchParams, ctx: RequestContext, kind: WriteOptionsKind): void {
  const options = writeOptionsOf(params, kind)
  ctx.dryRun = options.dryRun
  ctx.fieldValidation = fieldValidationOf(params)
  ctx.fieldManager = managerName(options.fieldManager, request.headers.get('user-agent'))
}

function objectOut(entry: ResourceEntry, obj: KubeObject, format: OutputFormat, now: Date, status = 200): Response | Promise<Response> {
  if (format.kind === 'partial-metadata') {
    if (format.list) throw partialMetadataMismatch(entry, true)
    return objectResponse(partialObjectMetadata(obj, format.version), { kind: 'json' }, status)
  }
  if (format.kind === 'table') {
    const table = toTable(entry, [obj], { resourceVersion: obj.metadata.resourceVersion ?? '' }, format.includeObject, now)
    return objectResponse(table, { kind: 'json' }, status)
  }
  // An object of megabytes (marked so by the write that stored it) is encoded in steps.
  if (isMarkedLarge(obj)) return objectResponseInSteps(obj as Record<string, unknown>, format, status)
  return objectResponse(obj as Record<string, unknown>, format, status)
}

/** Upstream's warning on a kind deprecated at or before the served release, else undefined. */
function deprecationWarning(entry: ResourceEntry, served: HandlerEnv['servedRelease']): string | undefined {
  const d = entry.deprecated
  if (!d || !served || served.major < d.major || (served.major === d.major && served.minor < d.minor)) return undefined
  const text = `${groupVersion(entry)} ${entry.kind} is deprecated in v${d.major}.${d.minor}+`
  return d.replacement ? `${text}; use ${d.replacement}` : text
}

export async function handleResource(request: Request, info: RequestInfo, env: HandlerEnv): Promise<Response> {
  const entry = env.registry.catalogue.lookup(info.apiGroup, info.apiVersion, info.resource)
  if (!entry) throw resourceNotFound()
  // Authentication's warnings come first, then a deprecated kind's, as upstream's handler adds it before it serves.
  const deprecation = deprecationWarning(entry, env.servedRelease)
  const warnings = env.authWarnings?.length ? env.authWarnings.splice(0) : []
  if (deprecation) warnings.push(deprecation)
  let res: Response
  try {
    res = await handleEntry(request, info, entry, env, warnings)
  } catch (err) {
    // A refusal carries what was warned of before it (a webhook's warnings beside its denial), as upstream's does.
    if (!(err instanceof StatusError) || warnings.length === 0) throw err
    res = statusResponse(err, request.headers.get('accept'))
  }
  return withWarnings(res, warnings)
}

async function handleEntry(request: Request, info: RequestInfo, entry: ResourceEntry, env: HandlerEnv, warnings: string[]): Promise<Response> {
  // A namespaced collection lives under /namespaces/<ns>/, except for reads across all namespaces.
  if (entry.namespaced && !info.namespace && !['list', 'watch'].includes(info.verb)) throw resourceNotFound()
  // A cluster-scoped resource has no route under /namespaces/<ns>/, as upstream's router has none: served there, it
  // was authorized in that namespace, and a Role there granted nodes, namespaces or webhook configurations.
  if (!entry.namespaced && info.namespace && !isNamespaceOwnPath(entry, info)) throw resourceNotFound()
  if (info.subresource) return handleSubresource(request, info, entry, env, warnings)
  // A verb the resource does not serve has no route upstream: its router refuses the method.
  if (!entry.verbs.includes(info.verb as Verb)) throw methodNotAllowed()
  // Writes to one object need its name in the URL; a create names it in the body.
  if ((['update', 'patch'].includes(info.verb) && !info.name) || (info.verb === 'create' && info.name)) throw methodNotAllowed()
  refuseUnroutableMedia(request, info, entry)
  const params = queryOf(request)
  const ctx = requestContext(env, warnings)
  // Every verb's answer may be a Table, as upstream converts whatever its handler returns (a write's object too),
  // but for the reviews, which have no table convertor upstream: a Table alone is a 406 for them.
  const format = negotiateOutput(request.headers.get('accept'), { allowTable: !entry.virtualCreate, includeObject: params.get('includeObject') })
  const ns = entry.namespaced ? info.namespace : ''

  // The legacy bindings collection binds a pod, admitted as a create of bindings (pod-binding.ts).
  if (entry.group === '' && entry.resource === 'bindings' && info.verb === 'create') return handleBinding(request, params, info, env, ctx, entry, undefined)
  if (entry.virtualCreate) {
    const body = await decodeBody(request.headers.get('content-type'), await readBodyBytes(request, env.maxBodyBytes), env.yamlDecoder)
    if (!isPlainObject(body)) throw badRequest('the body of the request must be a JSON or YAML object')
    env.auditRequestObject?.(body)
    let obj = body as KubeObject
    if (!isPlainObject(obj.metadata)) obj.metadata = {}
    writeContext(request, params, ctx, 'CreateOptions')
    // A review is admitted as any create is (upstream's review REST calls its create validation), then answered.
    obj = await env.registry.admit(entry, { operation: 'CREATE', object: obj, namespace: ns }, ctx)
    const answer = await entry.virtualCreate(obj, {
      user: env.user,
      now: ctx.now,
      ...(info.namespace ? { namespace: info.namespace } : {}),
      notes: { annotations: env.auditAnnotations ?? {}, warnings },
    })
    // An access review echoes its spec, which the client may have made megabytes long: such an answer is encoded in steps.
    if (hasMoreValuesThan(answer, SLICED_WRITE_VALUES)) return objectResponseInSteps(answer as Record<string, unknown>, format, 201)
    return objectResponse(answer as Record<string, unknown>, format, 201)
  }

  // Component statuses are checked when read, never stored (component-statuses.ts).
  if (entry.computed) {
    const probes = env.componentProbes ?? []
    if (info.verb === 'get') return objectOut(entry, await getComponentStatus(probes, info.name), format, ctx.now)
    return listComponentStatuses(entry, probes, await parseListQuery(params, entry), format, ctx.now)
  }

  const store = env.registry.store(entry)
  switch (info.verb) {
    case 'get':
      refuseExport(params)
      // Read only to be encoded: the watch cache's own object, whose encoding it keeps.
      return objectOut(entry, await store.get(ns, info.name, params.get('resourceVersion') ?? undefined, true), format, ctx.now)
    case 'list': {
      const list = await store.list(ns, await parseListQuery(params, entry), true)
      if (format.kind === 'partial-metadata') {
        if (!format.list) throw partialMetadataMismatch(entry, false)
        return listResponse(partialObjectMetadataList(list.items, list.metadata, format.version), { kind: 'json' })
      }
      if (format.kind === 'table')
        return objectResponse(await toTableInSlices(entry, list.items, list.metadata, format.includeObject, ctx.now), { kind: 'json' })
      return listResponse(list as unknown as Record<string, unknown>, format)
    }
    case 'watch':
      // The legacy `/watch/.../<name>` path names one object, which is all its caller was authorized for.
      return watchResponse(store, ns, params, format, env, info.parts.length >= 2 ? info.name : undefined)
    case 'create': {
      writeContext(request, params, ctx, 'CreateOptions')
      const body = await readObjectBody(request, entry, env, ctx)
      return objectOut(entry, await store.create(ns, body, ctx), format, ctx.now, 201)
    }
    case 'update':
    case 'patch': {
      writeContext(request, params, ctx, info.verb === 'patch' ? 'PatchOptions' : 'UpdateOptions')
      // An apply creates the object that is not there, and so does a PUT of the kinds whose upstream strategy
      // allows it (AllowCreateOnUpdate); either asks for `create` as well. Other PUTs and patches of it are a 404.
      const mayCreate = info.verb === 'patch' || entry.strategy.allowCreateOnUpdate === true
      if (mayCreate && env.authorizer) ctx.authorizeCreate = createAuthorization(env.authorizer, env.user, info)
      const req = await writeRequest(request, entry, info.verb, env, ctx)
      const { object, created } = await write(store, ns, info.name, req, ctx)
      return objectOut(entry, object, format, ctx.now, created ? 201 : 200)
    }
    case 'delete': {
      const options = await readDeleteOptions(request, params, env.maxBodyBytes, env.yamlDecoder)
      ctx.dryRun = isDryRun(options)
      const result = await store.delete(ns, info.name, options, ctx)
      // Upstream answers 202 for an object kept only when orphanDependents=false asked for cascading.
      if (!result.deleted) return objectOut(entry, result.object, format, ctx.now, options.orphanDependents === false ? 202 : 200)
      return objectResponse(deletedStatus(entry, result.object), format)
    }
    case 'deletecollection': {
      const options = await readDeleteOptions(request, params, env.maxBodyBytes, env.yamlDecoder)
      ctx.dryRun = isDryRun(options)
      const list = await store.deleteCollection(ns, await parseListQuery(params, entry), options, ctx)
      if (format.kind === 'partial-metadata') {
        if (!format.list) throw partialMetadataMismatch(entry, false)
        return objectResponse(partialObjectMetadataList(list.items, list.metadata, format.version), { kind: 'json' })
      }
      if (format.kind === 'table') return objectResponse(await toTableInSlices(entry, list.items, list.metadata, format.includeObject, ctx.now), { kind: 'json' })
      return objectResponse(list as unknown as Record<string, unknown>, format)
    }
    default:
      throw methodNotAllowed()
  }
}

/**
 * `/api/v1/namespaces/<name>` and its subresources: a Namespace's own path,
 * whose request info names it as its namespace too (upstream's does). The
 * namespace named again beneath it (`namespaces/<name>/namespaces/<name>`) is not.
 */
function isNamespaceOwnPath(entry: ResourceEntry, info: RequestInfo): boolean {
  if (entry.group !== '' || entry.resource !== 'namespaces' || info.name !== info.namespace) return false
  // The path's segments after /api/v1 (and a legacy /watch): `namespaces`, the name and at most a subresource.
  const rest = info.path.split('/').filter((s) => s !== '').slice(2)
  if (rest[0] === 'watch') rest.shift()
  return rest.length <= 3 && rest[0] === 'namespaces' && info.parts[0] === 'namespaces' && info.parts[1] === info.name
}

/** What a DELETE answers when the object is gone at once (upstream's Status Success). */
function deletedStatus(entry: ResourceEntry, obj: KubeObject): Record<string, unknown> {
  const details: Record<string, unknown> = { name: obj.metadata.name, kind: entry.resource }
  if (entry.group) details['group'] = entry.group
  if (obj.metadata.uid) details['uid'] = obj.metadata.uid
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details }
}

/**
 * `?export`, gone since 1.14: upstream's GET of one object refuses any value
 * but "0" or "false" (a bare `?export` too) rather than ignore it.
 */
function refuseExport(params: URLSearchParams): void {
  const values = params.getAll('export')
  if (values.length === 0) return
  const first = values[0] ?? ''
  if (first !== '0' && first.toLowerCase() !== 'false') throw badRequest('the export parameter, deprecated since v1.14, is no longer supported')
}

/**
 * What a PUT or PATCH asks for: the next object as a function of the
 * current one (a PUT's body, or the current one patched), or a server-side
 * apply's configuration. The body's duplicate fields go to `ctx` for field validation.
 */
async function writeRequest(request: Request, entry: ResourceEntry, verb: string, env: HandlerEnv, ctx: RequestContext): Promise<PatchRequest> {
  if (verb === 'patch') return readPatch(request, entry, env.maxBodyBytes, ctx, env.yamlDecoder)
  const body = await readObjectBody(request, entry, env, ctx)
  const uid = isPlainObject(body) && isPlainObject(body['metadata']) ? body['metadata']['uid'] : undefined
  if (typeof uid === 'string' && uid !== '') ctx.updatePreconditionUid = uid
  return { apply: false, put: body, patch: () => cloneJson(body) }
}

/** A create's or PUT's body; its duplicate fields go to `ctx` unless field validation ignores them. */
async function readObjectBody(request: Request, entry: ResourceEntry, env: HandlerEnv, ctx: RequestContext): Promise<unknown> {
  const { body, duplicates } = await readAndDecodeObjectBody(request, env.maxBodyBytes, ctx.fieldValidation !== 'Ignore', env.yamlDecoder, entry.kind)
  ctx.bodyProblems = duplicates
  env.auditRequestObject?.(body)
  return body
}

/**
 * The check a write authorized as a patch or an update passes before it
 * creates the object: the same request asked as a `create`, refused with
 * upstream's Forbidden (withAuthorization in its patch and update handlers).
 * Without it, `patch` alone let a caller create anything by applying it.
 */
function createAuthorization(authorizer: Authorizer, user: UserInfo, info: RequestInfo): () => Promise<void> {
  return async () => {
    const { decision, reason } = await authorizer.authorize(attributesOf(user, { ...info, verb: 'create' }))
    if (decision === 'allow') return
    const resource = info.apiGroup ? `${info.resource}.${info.apiGroup}` : info.resource
    const details = { name: info.name, ...(info.apiGroup ? { group: info.apiGroup } : {}), kind: info.resource }
    throw new StatusError(403, 'Forbidden', `${resource} ${JSON.stringify(info.name)} is forbidden: ${reason}`, details)
  }
}

/** Runs a PUT or PATCH on one object (or its status); an apply may create it, and a PUT of the object itself (see ResourceStore.put). */
async function write(
  store: ResourceStore,
  namespace: string,
  name: string,
  req: PatchRequest,
  ctx: RequestContext,
  subresource?: NarrowedSubresource,
): Promise<{ object: KubeObject; created: boolean }> {
  if (req.apply) {
    // Served where the endpoint's strategy says what a writer owns through it (status, pods/resize).
    const owns = subresource === undefined || subresource === 'status' || store.entry.subresources?.some((s) => s.name === subresource && s.ownedFields)
    if (!owns) throw unsupportedMediaType(APPLY_PATCH_TYPE, patchTypes(store.entry).filter((t) => t !== APPLY_PATCH_TYPE))
    return store.apply(namespace, name, req.config, ctx, subresource)
  }
  // The answer is only encoded for the client: an update that changes nothing answers the stored object itself.
  if (req.put !== undefined && subresource === undefined) return store.put(namespace, name, req.put, req.patch, ctx, { answerOnly: true })
  return { object: await store.update(namespace, name, req.patch, ctx, subresource, { answerOnly: true }), created: false }
}

const STREAMS_BY_GET_OR_POST: ReadonlySet<string> = new Set(['exec', 'attach', 'portforward'])

/** The subresources whose writes the store narrows to what each one changes. */
type NarrowedSubresource = 'status' | 'approval' | 'finalize' | 'ephemeralcontainers' | 'resize'
const NARROWED_BY_OWN_STRATEGY: ReadonlySet<string> = new Set(['approval', 'finalize', 'ephemeralcontainers', 'resize'])

/**
 * `<resource>/status`, `<resource>/scale`, a CertificateSigningRequest's
 * `approval`, a namespace's `finalize` and a pod's `ephemeralcontainers`
 * and `resize`: a read gives the object (or its Scale), a write changes its
 * status (its replicas, its conditions, its finalizers, its containers'
 * resources) as the subresource's upstream strategy allows. Other
 * subresources are not served here.
 */
async function handleSubresource(request: Request, info: RequestInfo, entry: ResourceEntry, env: HandlerEnv, warnings: string[]): Promise<Response> {
  const sub = entry.subresources?.find((s) => s.name === info.subresource)
  const served = ['status', 'scale', 'approval', 'finalize', 'ephemeralcontainers', 'resize', 'eviction', 'binding', ...(env.serviceAccountTokens ? ['token'] : [])]
  const reachesOut = env.nodeAgent !== undefined && entry.group === '' && isNodeAgentSubresource(entry.resource, info.subresource)
  if (!sub || !(served.includes(sub.name) || reachesOut) || !info.name) throw resourceNotFound()
  // A proxy passes OPTIONS on too, as upstream's proxy REST connects it (its ConnectMethods): its request info gives
  // OPTIONS no verb, so a caller needs a rule of every verb (`*`) on the subresource, as upstream's authorizer asks.
  const proxiedOptions = sub.name === 'proxy' && request.method === 'OPTIONS'
  if (!sub.verbs.includes(info.verb as Verb) && !proxiedOptions) throw methodNotAllowed()
  refuseUnroutableMedia(request, info, entry)
  const params = queryOf(request)
  const ctx = requestContext(env, warnings)
  if (reachesOut && env.nodeAgent) {
    // exec, attach and port-forward are routed for GET and POST alone, as upstream's connecters; a HEAD is no read of them.
    if (STREAMS_BY_GET_OR_POST.has(sub.name) && request.method !== 'GET' && request.method !== 'POST') throw methodNotAllowed()
    // Nothing reaches a node agent before admission has seen the CONNECT (pods/log is a read, as upstream).
    if (isConnectSubresource(entry.resource, sub.name)) await admitConnect(env.registry, entry, info, params, ctx)
    return handleNodeAgentSubresource(request, info, entry, env.nodeAgent, env.passUpgrade, env.remoteAddress)
  }
  if (sub.name === 'eviction') return handleEviction(request, params, info, env, ctx)
  if (sub.name === 'binding') return handleBinding(request, params, info, env, ctx, entry, info.name)
  if (sub.name === 'token') return handleTokenRequest(request, params, info, entry, env, ctx)
  const store = env.registry.store(entry)
  const ns = entry.namespaced ? info.namespace : ''
  const scale = sub.name === 'scale'
  const format = negotiateOutput(request.headers.get('accept'), {
    allowTable: !scale && info.verb === 'get',
    includeObject: params.get('includeObject'),
  })
  if (info.verb === 'get')
    return scale ? objectResponse(await getScale(store, ns, info.name), format) : objectOut(entry, await store.get(ns, info.name), format, ctx.now)
  writeContext(request, params, ctx, info.verb === 'patch' ? 'PatchOptions' : 'UpdateOptions')
  const req = await writeRequest(request, entry, info.verb, env, ctx)
  if (scale) {
    if (req.apply) throw unsupportedMediaType(APPLY_PATCH_TYPE, patchTypes(entry).filter((t) => t !== APPLY_PATCH_TYPE))
    // A Scale must name the object it scales, as any object written to a URL must (upstream's checkName):
    // a PUT's before the object is read, a patched one once patched.
    const named = (scale: unknown): unknown => {
      checkUpdateNames(isPlainObject(scale) && isPlainObject(scale['metadata']) ? (scale['metadata'] as ObjectMeta) : {}, ns, info.name)
      return scale
    }
    if (req.put !== undefined) named(req.put)
    const patch = req.patch
    return objectResponse(await updateScale(store, ns, info.name, async (current) => named(patchedScale(await patch(current), ctx)), ctx), format)
  }
  const narrowed = NARROWED_BY_OWN_STRATEGY.has(sub.name) ? (sub.name as NarrowedSubresource) : 'status'
  const { object } = await write(store, ns, info.name, req, ctx, narrowed)
  return objectOut(entry, object, format, ctx.now)
}

/**
 * `pods/<name>/eviction`: the Eviction body's DeleteOptions (its dryRun and
 * the query's, checked as a create's options), then the eviction itself.
 */
async function handleEviction(request: Request, params: URLSearchParams, info: RequestInfo, env: HandlerEnv, ctx: RequestContext): Promise<Response> {
  const { dryRun } = writeOptionsOf(params, 'CreateOptions')
  const body = await decodeBody(request.headers.get('content-type'), await readBodyBytes(request, env.maxBodyBytes), env.yamlDecoder)
  env.auditRequestObject?.(body)
  const options = evictionDeleteOptions(body, info.namespace, info.name, dryRun ? params.getAll('dryRun') : [])
  const status = await evictPod(env.registry, info.namespace, info.name, body as KubeObject, options, ctx)
  return objectResponse(status, negotiateOutput(request.headers.get('accept'), { allowTable: false, includeObject: null }), 201)
}

/** `pods/<name>/binding` and the legacy `bindings` collection: a Binding that sets the pod's node (pod-binding.ts). */
async function handleBinding(request: Request, params: URLSearchParams, info: RequestInfo, env: HandlerEnv, ctx: RequestContext, entry: ResourceEntry, urlName: string | undefined): Promise<Response> {
  writeContext(request, params, ctx, 'CreateOptions')
  const body = await decodeBody(request.headers.get('content-type'), await readBodyBytes(request, env.maxBodyBytes), env.yamlDecoder)
  const status = await bindPod(env.registry, { namespace: info.namespace, body, ...(urlName !== undefined ? { urlName } : {}), admittedAs: entry }, ctx)
  return objectResponse(status, negotiateOutput(request.headers.get('accept'), { allowTable: false, includeObject: null }), 201)
}

const TOKEN_REQUEST_TYPE = typeForKind('authentication.k8s.io', 'v1', 'TokenRequest')

/** `serviceaccounts/<name>/token`: a TokenRequest answered with a signed token (never stored). */
async function handleTokenRequest(
  request: Request,
  params: URLSearchParams,
  info: RequestInfo,
  entry: ResourceEntry,
  env: HandlerEnv,
  ctx: RequestContext,
): Promise<Response> {
  ctx.dryRun = writeOptionsOf(params, 'CreateOptions').dryRun
  const tokens = env.serviceAccountTokens
  if (!tokens) throw resourceNotFound()
  const body = await decodeBody(request.headers.get('content-type'), await readBodyBytes(request, env.maxBodyBytes), env.yamlDecoder)
  // Typed as upstream decodes it: a field of the wrong type (an expirationSeconds of "3600" or 3600.5) is a 400.
  if (isPlainObject(body) && TOKEN_REQUEST_TYPE) decodeAs(body, TOKEN_REQUEST_TYPE, typeTable, 'TokenRequest', 'v1')
  env.auditRequestObject?.(body)
  const warnings = (ctx.warnings ??= [])
  const admission = tokenRequestAdmission(env.registry, entry, info, ctx)
  const call = { namespace: info.namespace, name: info.name, body, now: ctx.now, warnings, admission }
  const answer = await createTokenRequest({ catalogue: env.registry.catalogue, stored: storedObjects(env.registry) }, await tokens.issuerConfig(), call)
  const format = negotiateOutput(request.headers.get('accept'), { allowTable: false, includeObject: null })
  return objectResponse(answer as Record<string, unknown>, format, 201)
}

/**
 * How long a watch lives, as upstream's watch handler decides: the client's
 * timeoutSeconds, else (also for 0) a random time in [min, 2*min] so that
 * watches do not all end and come back at once. 0 (no minimum either) means no end;
 * a negative one, a deadline already past.
 */
export function watchTimeoutSeconds(
  timeoutSeconds: number | undefined,
  minRequestTimeoutSeconds: number,
  random: () => number = Math.random,
): number {
  if (timeoutSeconds) return timeoutSeconds
  return minRequestTimeoutSeconds > 0 ? minRequestTimeoutSeconds * (1 + random()) : 0
}

/**
 * The longest delay a timer takes (2^31 - 1 ms, some 24.8 days): a longer
 * one fires at once. A watch asked to last longer has no deadline, as good
 * as its own for any connection.
 */
const MAX_TIMER_MS = 2 ** 31 - 1

/**
 * The field selector of a watch of the object `name`: that object alone, as
 * upstream's list handler narrows a request whose path names one; a selector
 * the client gave must pick that same name.
 */
function selectingOnly(name: string, given: FieldSelector | undefined): FieldSelector {
  if (!given || given.empty) return nameSelector(name)
  if (given.requiredValue('metadata.name') !== name) throw badRequest("fieldSelector metadata.name doesn't match requested name")
  return given
}

async function watchResponse(
  store: ResourceStore,
  namespace: string,
  params: URLSearchParams,
  format: OutputFormat,
  env: HandlerEnv,
  name: string | undefined,
): Promise<Response> {
  const entry = store.entry
  // YAML has no stream form: a watch negotiated to it is refused as upstream's stream negotiation refuses it.
  if (format.kind === 'yaml') throw notAcceptable(WATCH_STREAM_TYPES)
  const query = await parseListQuery(params, entry, 'watch')
  if (name !== undefined) query.fieldSelector = selectingOnly(name, query.fieldSelector)
  // A resourceVersion that is no number is refused before the watch starts, as upstream's watch cache refuses it:
  // its versioner's error is no API status, so upstream answers a 500 with its words and no reason.
  const invalidVersion = resourceVersionSyntaxError(query.resourceVersion)
  if (invalidVersion) throw new StatusError(500, '' as StatusReason, invalidVersion)
  const seconds = watchTimeoutSeconds(query.timeoutSeconds, env.minRequestTimeoutSeconds)
  const controller = new AbortController()
  // A negative timeoutSeconds is a deadline already past: upstream's watch ends as it starts.
  if (seconds < 0) controller.abort()
  const timer = seconds > 0 && seconds * 1000 <= MAX_TIMER_MS ? setTimeout(() => controller.abort(), seconds * 1000) : undefined
  const forget = env.onShutdown(() => controller.abort())
  // A custom resource's entry replaced (its CRD changed: schema, defaults, names) ends the watch, as upstream
  // stops the old storage's watchers: the client watches again and sees the objects as the CRD now has them.
  const unfollow = env.registry.catalogue.onChange(({ removed }) => {
    if (removed.includes(entry)) controller.abort()
  })
  const counted = env.watchMetrics?.opened({ group: entry.group, version: entry.version, kind: entry.kind })
  const cleanUp = () => {
    clearTimeout(timer)
    forget()
    unfollow()
    counted?.closed()
  }
  // Events are only encoded: the watch cache's objects come uncopied, their text made once for every watcher.
  const watcher = store.watch(namespace, query, controller.signal, env.bookmarkIntervalMs, true)
  const apiVersion = groupVersion(entry)
  let sentColumns = false
  const encodeObject = (event: StorageEvent): unknown => {
    // Upstream turns each event's object as it would a GET's; one it cannot turn (a list asked for) goes as it is.
    if (format.kind === 'partial-metadata' && !format.list) return partialObjectMetadata(event.object, format.version)
    if (event.type === 'BOOKMARK') return { kind: entry.kind, apiVersion, metadata: event.object.metadata }
    if (format.kind !== 'table') return event.object
    const now = env.now()
    const include: IncludeObject = format.includeObject
    if (!sentColumns) {
      sentColumns = true
      return toTable(entry, [event.object], { resourceVersion: event.object.metadata.resourceVersion ?? '' }, include, now)
    }
    return {
      kind: 'Table',
      apiVersion: 'meta.k8s.io/v1',
      metadata: { resourceVersion: event.object.metadata.resourceVersion ?? '' },
      rows: [tableRow(entry, event.object, include, now)],
    }
  }
  // Watch events are JSON lines whatever else the client accepts.
  const body = watchStream({ watcher, encodeObject, signal: controller.signal, onEnd: cleanUp, ...(counted ? { onEvent: counted.event } : {}) })
  return new Response(body, { status: 200, headers: { 'content-type': 'application/json' } })
}
