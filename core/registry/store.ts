/**
 * Generic REST over storage for one catalogue entry, as upstream's generic
 * registry Store: the metadata rules and optimistic concurrency live here,
 * per-resource behaviour in the entry's strategy hooks.
 */
import { alreadyExists, badRequest, type GroupResource, hasStatusCode, StatusError, notFound } from '../machinery/status-error.js'
import { groupVersion, type ResourceEntry, storagePath, type StrategyContext } from '../resources/catalogue.js'
import { cloneJson, cloneJsonInSteps, formatTimestamp, isPlainObject, type KubeList, type KubeObject } from '../machinery/object.js'
import { reissueAtLatest } from '../storage/continue-token.js'
import { markedLarge } from '../machinery/large-objects.js'
import { type Preconditions, type Storage, StorageError, type Watcher, type WatchOptions } from '../storage/interface.js'
import { asGoEncodes, asGoEncodesInSteps, goEncodedCopy } from '../encoding/canonical.js'
import { fieldPath, invalid, invalidError } from '../machinery/field.js'
import { type KindRegistered, otherKindError } from './body-kind.js'
import { goPrint } from '../machinery/go-format.js'
import { UndecodableBody } from '../resources/schema/json-decoding.js'
import { isValidPathSegmentName } from '../machinery/names.js'
import { validateObjectMetaInSteps, validateObjectMetaUpdateInSteps } from '../validation/object-meta.js'
import { type ListQuery, selectorPredicate } from './list-query.js'
import { type DeleteOptions, namesNoPropagation, planDeletion, validateDeleteOptions } from './deletion.js'
import { enforceFieldValidation } from './field-validation.js'
import { type AdmissionChain, emptyAdmissionChain } from '../admission/chain.js'
import type { MutatingAdmission } from '../admission/mutating.js'
import type { WriteAuthorization } from '../authz/rbac/escalation.js'
import { type AdmissionStep, type AdmittedAs, runMutatingAdmission, runValidatingAdmission } from './admission-step.js'
import { applyConfiguration, checkApplyVersion, guardManagedFields, recordUpdate } from './managed-fields.js'
import { WriteSteps } from './write-steps.js'
import { generateName } from './object-names.js'
import { checkDeletePreconditions, checkUpdateNames, checkUpdatePrecondition, checkUpdateUid } from './preconditions.js'
import type { RequestContext } from './request-context.js'
import { interpretStorageError } from './storage-errors.js'
import { type FinishWrite, finishNothing, once, type StoreHooks } from './store-hooks.js'
import { initialGeneration, keepStoredStatus, nextGeneration, withConditionsOnly, withStatusOnly, withStoredStatus } from './subresources.js'
import { WatchListWatcher } from './watch-list.js'
import { settled, TimeSlice, valueAtOnce } from '../machinery/time-slice.js'

export type { DeleteOptions } from './deletion.js'

export interface DeleteResult {
  object: KubeObject
  /** false when the object stays, marked for deletion (finalizers). */
  deleted: boolean
}

/** Server-wide settings handed to every strategy hook. */
export interface StorePolicy {
  allowPrivileged?: boolean
  /** Feature gate CoordinatedLeaderElection: Leases keep their strategy and preferredHolder. */
  coordinatedLeaderElection?: boolean
  /** Deletes one DeleteCollection runs at a time (`--delete-collection-workers`). */
  deleteCollectionWorkers?: number
  /**
   * The admission every write passes: its mutating plugins after managedFields are recorded,
   * its validating ones once the strategy has validated the object.
   * @default no plugin
   */
  admission?: AdmissionChain
  /** What strategies that check the writer's permissions ask (the RBAC escalation checks); without it they check nothing. */
  authorization?: WriteAuthorization
  /**
   * Events a watch served by the storage itself (not by the watch cache) may
   * have waiting before it is ended as too slow; the watch cache bounds its own.
   * @default unbounded
   */
  watcherBufferSize?: number
  /** Told of each such watch ended, to count it as the cache's (`apiserver_terminated_watchers_total`). */
  onWatcherTerminated?: (resource: { group: string; resource: string }) => void
  /** Which kinds the built-in scheme knows in which version, to refuse a body of another kind in upstream's words. */
  kindRegistered?: KindRegistered
}

const defaultAdmission: AdmissionChain = emptyAdmissionChain

/** Upstream's `--etcd-prefix` default: every key starts with it. */
export const DEFAULT_STORAGE_PREFIX = '/registry'

export class ResourceStore {
  readonly gr: GroupResource
  private readonly apiVersion: string
  private readonly mutating: MutatingAdmission
  private readonly admission: AdmissionChain

  constructor(
    readonly entry: ResourceEntry,
    /** Where this resource's objects live (the storage factory's answer for it). */
    readonly storage: Storage,
    /** `--kvstore-prefix`, without a trailing slash. */
    private readonly root: string = DEFAULT_STORAGE_PREFIX,
    /** Server-wide settings the strategies consult (`--allow-privileged`), and the admission chain. */
    private readonly policy: StorePolicy = {},
    /** The resource's own steps around its writes (a Service's allocations). */
    private readonly hooks: StoreHooks = {},
  ) {
    this.gr = { group: entry.group, resource: entry.resource }
    this.apiVersion = groupVersion(entry)
    this.admission = policy.admission ?? defaultAdmission
    this.mutating = guardManagedFields(this.admission.mutating)
  }

  /** `/registry/<resource>/` for all namespaces, `/registry/<resource>/<ns>/` for one. */
  prefix(namespace: string): string {
    const base = `${this.root}/${storagePath(this.entry)}/`
    return this.entry.namespaced && namespace ? `${base}${namespace}/` : base
  }

  /** Throws 400 for a name that cannot be a key segment, as upstream's key function does for kinds with no name rule. */
  key(namespace: string, name: string): string {
    const problems = isValidPathSegmentName(name)
    if (problems.length) throw badRequest(`Name parameter invalid: ${JSON.stringify(name)}: ${problems.join(';')}`)
    return this.entry.namespaced ? `${this.prefix(namespace)}${name}` : `${this.prefix('')}${name}`
  }

  /** With `readOnly` the caller promises not to change the object (it only encodes it): a cached one comes uncopied and frozen. */
  async get(namespace: string, name: string, resourceVersion?: string, readOnly = false): Promise<KubeObject> {
    const opts = { ...(resourceVersion ? { resourceVersion } : {}), readOnly }
    const obj = await this.call(name, () => this.storage.get(this.key(namespace, name), opts))
    if (!obj) throw notFound(this.gr, name)
    return obj
  }

  /** `readOnly` as for get: the items may be the cache's own frozen objects. */
  async list(namespace: string, query: ListQuery, readOnly = false): Promise<KubeList> {
    const predicate = selectorPredicate(this.entry, query)
    const { resourceVersion, limit, continue: token } = query
    const opts = { resourceVersion, resourceVersionMatch: listMatch(query), limit, continue: token, predicate, readOnly }
    const result = await this.withFreshContinue(namespace, token, () =>
      this.call('', () => this.storage.list(this.prefix(namespace), opts), token !== undefined),
    )
    const metadata: KubeList['metadata'] = { resourceVersion: String(result.revision) }
    if (result.continue) metadata.continue = result.continue
    if (result.remainingItemCount !== undefined) metadata.remainingItemCount = result.remainingItemCount
    return { kind: this.entry.listKind, apiVersion: this.apiVersion, metadata, items: result.items }
  }

  /**
   * An expired continue token gets 410 with a token for the rest of the list
   * at the latest revision, as upstream offers one.
   */
  private async withFreshContinue<T>(namespace: string, token: string | undefined, op: () => Promise<T>): Promise<T> {
    try {
      return await op()
    } catch (err) {
      if (token && hasStatusCode(err, 410) && err instanceof StatusError)
        err.listMeta = { continue: reissueAtLatest(token, this.prefix(namespace)) }
      throw err
    }
  }

  /**
   * A watch of one namespace (or all), narrowed by the query's selectors;
   * with `sendInitialEvents` a watch-list that streams the state first.
   */
  /** `readOnly` as for get: the events may carry the cache's own frozen objects. */
  watch(namespace: string, query: ListQuery, signal: AbortSignal, bookmarkIntervalMs: number, readOnly = false): Watcher {
    const predicate = selectorPredicate(this.entry, query)
    const name = query.fieldSelector?.requiredValue('metadata.name')
    // A watch pinned to one name watches that key alone, as kubectl's delete --wait does.
    const pinned = name && (!this.entry.namespaced || namespace)
    const target = pinned ? this.key(namespace, name) : this.prefix(namespace)
    if (query.sendInitialEvents !== undefined) {
      return new WatchListWatcher(this.storage, {
        listPrefix: this.prefix(namespace),
        target,
        resourceVersion: query.resourceVersion,
        sendInitialEvents: query.sendInitialEvents,
        predicate,
        allowWatchBookmarks: query.allowWatchBookmarks,
        bookmarkIntervalMs,
        signal,
        readOnly,
        bound: this.watchBound(),
        // A too old resourceVersion keeps the watch wording ("too old resource version"); the rest as for a list.
        interpretError: (err) =>
          err instanceof StorageError && err.code !== 'Compacted' ? interpretStorageError(err, this.gr, '') : err,
      })
    }
    return this.storage.watch(target, {
      ...(query.resourceVersion !== undefined ? { resourceVersion: query.resourceVersion } : {}),
      ...(predicate ? { predicate } : {}),
      bookmarks: query.allowWatchBookmarks,
      bookmarkIntervalMs,
      signal,
      readOnly,
      ...this.watchBound(),
    })
  }

  /** How far a client may fall behind a watch the storage serves itself, and who counts it when it does. */
  private watchBound(): Pick<WatchOptions, 'bufferSize' | 'onTerminated'> {
    const { watcherBufferSize, onWatcherTerminated } = this.policy
    if (!watcherBufferSize) return {}
    return { bufferSize: watcherBufferSize, onTerminated: () => onWatcherTerminated?.(this.gr) }
  }

  /**
   * Upstream's refusal of a body naming `apiVersion` and `kind` where a
   * `target` (a subresource's kind, as `autoscaling/v1` Scale) is decoded,
   * or undefined when it names the target itself (body-kind.ts).
   */
  otherKindRefusal(apiVersion: string, kind: string, target: { apiVersion: string; kind: string }): StatusError | undefined {
    return otherKindError(apiVersion, kind, target, this.policy.kindRegistered ?? (() => false))
  }

  /**
   * Checks apiVersion, kind, name and namespace of a body against the URL
   * and fills what is missing, in place. The keys stay where the client put
   * them: the object is put in Go's order (apiVersion and kind first) by
   * goEncoded before it is kept or answered. A copy made here instead would
   * be one more pass at once over the body's top level, which a client may
   * make hundreds of thousands of keys wide (each dropped later as unknown).
   */
  private checkBody(body: unknown, namespace: string, urlName: string | undefined): KubeObject {
    const obj = this.refuseBody(body, namespace, urlName)
    obj.apiVersion = this.apiVersion
    obj.kind = this.entry.kind
    obj.metadata ??= {}
    this.ensureRequestNamespace(obj, namespace)
    return obj
  }

  /**
   * The object's namespace as the request's (upstream's
   * EnsureObjectNamespaceMatchesRequestNamespace): filled when unset, cleared
   * for a cluster-scoped kind, another one refused. Checked on the body, and
   * again after mutating admission, which may have changed it: the object is
   * kept under the request's namespace, and must not claim another.
   */
  private ensureRequestNamespace(obj: KubeObject, namespace: string): void {
    const meta = obj.metadata
    if (!this.entry.namespaced) {
      if (meta.namespace !== undefined) delete meta.namespace
      return
    }
    if (meta.namespace && meta.namespace !== namespace)
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request')
    meta.namespace = namespace
  }

  /** What checkBody refuses, without changing the body: a PUT's body is checked so before the object is looked up. */
  private refuseBody(body: unknown, namespace: string, urlName: string | undefined): KubeObject {
    if (!isPlainObject(body)) throw badRequest('the body of the request must be a JSON or YAML object')
    const obj = body as KubeObject
    let { apiVersion, kind } = obj
    const registered = this.policy.kindRegistered
    if (!this.entry.schema && registered) {
      // As upstream's decoder: an empty or missing apiVersion or kind is the URL's, another kind is refused.
      if (apiVersion === '' || apiVersion === undefined) apiVersion = this.apiVersion
      if (kind === '' || kind === undefined) kind = this.entry.kind
      if (typeof apiVersion === 'string' && typeof kind === 'string') {
        const refused = otherKindError(apiVersion, kind, { apiVersion: this.apiVersion, kind: this.entry.kind }, registered)
        if (refused) throw refused
      }
    }
    if (apiVersion !== undefined && apiVersion !== this.apiVersion)
      throw badRequest(`the API version in the data (${String(apiVersion)}) does not match the expected API version (${this.apiVersion})`)
    if (kind !== undefined && kind !== this.entry.kind)
      throw badRequest(`the kind in the data (${String(kind)}) does not match the expected kind (${this.entry.kind})`)
    const meta = obj.metadata ?? {}
    if (!isPlainObject(meta)) {
      // A built-in kind's decoder refuses it first, in Go's words (`... into Go struct field ConfigMap.metadata of type v1.ObjectMeta`).
      valueAtOnce(this.entry.decode?.(obj))
      throw badRequest('metadata must be an object')
    }
    // An update's object names what its URL names (upstream's checkName, for a PUT's body and a patch's result alike).
    if (urlName !== undefined) checkUpdateNames(meta, namespace, urlName)
    if (this.entry.namespaced && meta.namespace && meta.namespace !== namespace)
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request')
    return obj
  }

  /**
   * An update's object checked against its URL and, with `decode`, decoded
   * as its kind with the request's field validation. The result of a patch
   * that does not decode is refused as upstream's patch handler refuses it:
   * 422 on the field `patch`, quoting the patched object (made again by
   * `again`, as it was before decoding dropped anything) or, for a strategic
   * merge, the patch.
   */
  private async patchedBody(
    body: () => unknown,
    namespace: string,
    name: string,
    ctx: RequestContext,
    again: () => unknown,
    decode: boolean,
  ): Promise<KubeObject> {
    try {
      const obj = this.checkBody(await body(), namespace, name)
      if (decode) enforceFieldValidation(ctx, this.entry, (await settled(this.entry.decode?.(obj))) ?? [])
      return obj
    } catch (err) {
      const patch = ctx.patch
      const { kind, version } = this.entry
      const prefix = `${kind} in version ${JSON.stringify(version)} cannot be handled as a ${kind}: `
      if (!patch || !(err instanceof StatusError) || err.code !== 400 || !err.message.startsWith(prefix)) throw err
      const quote = patch.strategic ? goPrint(patch.sent) : JSON.stringify(await again())
      // A strategic merge's result meets upstream's unstructured converter, which words a scalar of the wrong type its own way.
      const converted = patch.strategic && err instanceof UndecodableBody ? err.converted : undefined
      throw invalidError('', '', '', [invalid(fieldPath('patch'), quote, converted ?? err.message.slice(prefix.length))])
    }
  }

  private strategyContext(ctx: RequestContext): StrategyContext {
    const sctx: StrategyContext = { user: ctx.user, now: ctx.now, allowPrivileged: this.policy.allowPrivileged ?? false }
    if (this.policy.coordinatedLeaderElection) sctx.coordinatedLeaderElection = true
    if (this.policy.authorization) sctx.authorization = this.policy.authorization
    return sctx
  }

  /**
   * Creates the object `body` describes. `put` names the object a PUT
   * creates (see put): its body must name it too, and a resourceVersion it
   * carries is dropped rather than refused, as upstream's storage drops it.
   * `urlName` is the name the request's URL gives (a PUT's, an apply's).
   */
  async create(namespace: string, body: unknown, ctx: RequestContext, put?: { name: string }, urlName = put?.name): Promise<KubeObject> {
    let obj = this.checkBody(body, namespace, put?.name)
    const meta = obj.metadata
    if (put) {
      // A uid is a precondition no missing object meets (upstream's storage checks it before its update makes one).
      if (ctx.updatePreconditionUid !== undefined) checkUpdateUid(this.key(namespace, put.name), ctx.updatePreconditionUid, { metadata: { name: put.name } }, this.gr)
      delete meta.resourceVersion
    } else if (meta.resourceVersion) throw badRequest('resourceVersion should not be set on objects to be created')
    const sctx = this.strategyContext(ctx)
    if (urlName !== undefined) sctx.urlName = urlName
    const steps = WriteSteps.for(obj)
    // Telling a large object (a level of many keys is a pass over them) and decoding it: two steps.
    await steps.yield()
    enforceFieldValidation(ctx, this.entry, (await steps.settle(this.entry.decode?.(obj))) ?? [])
    this.entry.strategy.normalize?.(obj)
    await steps.settle(this.entry.strategy.applyDefaults?.(obj))
    await steps.pause()
    // Ownership of what the request asks for, then mutating admission, then the strategy (upstream's order).
    await recordUpdate(this.entry, this.apiVersion, obj, undefined, ctx, undefined, steps)
    await steps.pause()
    obj = await runMutatingAdmission(this.mutating, this.entry, { operation: 'CREATE', object: obj }, ctx)
    this.ensureRequestNamespace(obj, namespace)
    fillSystemFields(obj.metadata, ctx.now)
    await steps.pause()
    await this.entry.strategy.authorizeWrite?.(obj, undefined, sctx)
    await steps.settle(this.entry.strategy.prepareForCreate?.(obj, sctx))
    // Named now: a strategy may name an object sent without one (a LimitRange).
    const name = obj.metadata.name ?? ''
    initialGeneration(this.entry, obj)
    await this.entry.strategy.prepareValidation?.(obj)
    await steps.pause()
    const errs = await steps.validate(
      () => validateObjectMetaInSteps(obj, this.entry),
      () => this.entry.strategy.validate?.(obj, sctx),
    )
    if (errs.length) throw invalidError(this.entry.invalidKindGroup ?? this.entry.group, this.entry.kind, name, errs)
    await steps.pause()
    // Kept, and shown to the validating plugins, as upstream's struct encodes.
    obj = await goEncoded(obj, steps)
    await steps.pause()
    // A write authorized as another verb (a PUT or an apply that creates) asks for `create` here, as upstream's
    // create validation does: after the object is whole, before the validating plugins.
    await ctx.authorizeCreate?.()
    await runValidatingAdmission(this.admission.validating, this.entry, { operation: 'CREATE', object: obj }, ctx)
    const readBack = this.entry.strategy.readBack?.(obj)
    if (readBack) obj = goEncodedCopy(readBack)
    await steps.pause()
    const key = this.key(namespace, name)
    if (ctx.dryRun) {
      const existing = await this.call(name, () => this.storage.get(key))
      if (existing) throw alreadyExists(this.gr, name)
    }
    // Begun last, so that nothing after it but the write can fail; a dry run gives back at once what it took.
    const finish = once(this.hooks.beginCreate?.(obj, ctx) ?? finishNothing)
    try {
      if (ctx.dryRun) return obj
      const stored = await this.call(name, () => this.storage.create(key, obj))
      finish(true)
      // Encoding the answer is another pass over the object: others first, when it is large.
      await steps.pause()
      return stored
    } finally {
      finish(false)
    }
  }

  /**
   * Replaces the object with `next(current)`: the body of a PUT, or the
   * current object with a patch applied (a JSON patch may take its time and
   * return a promise). Runs inside the storage's
   * guaranteed update, so a concurrent write makes it start over.
   * Through the `status` subresource only the status changes; through the
   * main endpoint of a resource that has one, everything but the status.
   * Through `scale`, `next` changes the replicas alone; through a
   * CertificateSigningRequest's `approval`, its conditions alone; through a
   * namespace's `finalize`, everything but the status (its spec.finalizers).
   * With `answerOnly` the caller only reads (encodes) what it gets back, which
   * may then be the store's own frozen object rather than a copy. With
   * `admittedAs` admission sees the subresource's own object (see AdmittedAs).
   */
  async update(
    namespace: string,
    name: string,
    next: (current: KubeObject) => unknown,
    ctx: RequestContext,
    subresource?: 'status' | 'scale' | 'approval' | 'finalize' | 'ephemeralcontainers' | 'resize',
    { answerOnly = false, admittedAs }: { answerOnly?: boolean; admittedAs?: AdmittedAs } = {},
  ): Promise<KubeObject> {
    const sub = this.entry.subresources?.find((s) => s.name === subresource)
    // A subresource with a strategy of its own (pods/ephemeralcontainers, pods/resize) says what it changes and how that is
    // validated; one may also only check its writes its own way (a CRD's status: the accepted names alone).
    const own = sub?.narrowUpdate ? sub : undefined
    const ownValidation = sub?.validateUpdate
    const key = this.key(namespace, name)
    let toDelete: KubeObject | undefined
    let finish: FinishWrite = finishNothing
    let steps = WriteSteps.for()
    const tryUpdate = async (current: KubeObject): Promise<KubeObject> => {
      // A retry starts from a fresh read: what the last attempt took goes back first.
      finish(false)
      finish = finishNothing
      steps = WriteSteps.for(current)
      // The store copied the object for this call, in this turn: the copy here is a pass of its own.
      await steps.yield()
      const copy = steps.sliced ? await steps.run(cloneJsonInSteps(current)) : cloneJson(current)
      await steps.pause()
      let obj = await this.patchedBody(() => next(copy), namespace, name, ctx, () => next(cloneJson(current)), false)
      // A small object made large (a PUT of megabytes over a small one) has the rest of its steps sliced too.
      if (!steps.sliced) steps = WriteSteps.for(obj)
      await steps.pause()
      if (ctx.updatePreconditionUid !== undefined) checkUpdateUid(key, ctx.updatePreconditionUid, current, { group: this.entry.group, resource: this.entry.resource })
      if (subresource === 'status') obj = withStatusOnly(this.entry, obj, current)
      else if (subresource === 'approval') obj = withConditionsOnly(obj, current)
      else if (subresource === 'finalize') obj = withStoredStatus(obj, current)
      else if (own?.narrowUpdate) obj = own.narrowUpdate(obj, current)
      const meta = obj.metadata
      checkUpdatePrecondition(this.entry, meta.resourceVersion, current)
      meta.resourceVersion = current.metadata.resourceVersion ?? ''
      this.carryOverSystemFields(obj, current)
      // Decoding drops what the kind does not have (unknown fields), from the object it is given: that object is kept.
      obj = await this.patchedBody(() => obj, namespace, name, ctx, () => next(cloneJson(current)), true)
      this.entry.strategy.normalize?.(obj)
      await steps.settle(this.entry.strategy.applyDefaults?.(obj))
      await steps.pause()
      // Ownership of what the request asks for, then mutating admission, then the strategy (upstream's order).
      await recordUpdate(this.entry, this.apiVersion, obj, current, ctx, subresource, steps)
      await steps.pause()
      // Admitted as another kind, the object went through the mutating phase as that kind, in `next`.
      if (!admittedAs) obj = await runMutatingAdmission(this.mutating, this.entry, { operation: 'UPDATE', object: obj, old: current, subresource }, ctx)
      this.ensureRequestNamespace(obj, namespace)
      await steps.pause()
      await this.entry.strategy.authorizeWrite?.(obj, current, this.strategyContext(ctx))
      if (subresource !== 'status' && subresource !== 'approval' && subresource !== 'finalize' && !own) {
        keepStoredStatus(this.entry, obj, current)
        // After the generic status rule, so that a strategy may still record something there (a CRD's stored versions).
        this.entry.strategy.prepareForUpdate?.(obj, current, this.strategyContext(ctx))
      } else {
        sub?.prepareForUpdate?.(obj, current, this.strategyContext(ctx))
      }
      nextGeneration(this.entry, obj, current)
      await this.entry.strategy.prepareValidation?.(obj, current)
      await steps.pause()
      const errs = await steps.validate(
        () => validateObjectMetaUpdateInSteps(obj, current, this.entry),
        () =>
          ownValidation ? ownValidation(obj, current, this.strategyContext(ctx)) : this.entry.strategy.validateUpdate?.(obj, current, this.strategyContext(ctx)),
      )
      if (errs.length) throw invalidError(this.entry.invalidKindGroup ?? this.entry.group, this.entry.kind, name, errs)
      await steps.pause()
      obj = await goEncoded(obj, steps)
      await steps.pause()
      const [admitted, admittedOld] = admittedAs ? [admittedAs.view(obj), admittedAs.view(current)] : [obj, current]
      await runValidatingAdmission(this.admission.validating, this.entry, { operation: 'UPDATE', object: admitted, old: admittedOld, subresource }, ctx)
      await steps.pause()
      // The last finalizer of an object marked for deletion is gone: the update deletes it.
      const held = obj.metadata.finalizers?.length || this.entry.strategy.hasPendingFinalizers?.(obj)
      toDelete = obj.metadata.deletionTimestamp && !held ? obj : undefined
      finish = once(this.hooks.beginUpdate?.(obj, current, ctx) ?? finishNothing)
      return obj
    }
    try {
      // A dry run goes through every step on what is stored now, and gives back what it took.
      if (ctx.dryRun) return await tryUpdate(await this.get(namespace, name))
      const updated = await this.call(name, () => this.storage.guaranteedUpdate(key, tryUpdate, answerOnly ? { readOnly: true } : {}))
      finish(true)
      if (toDelete) {
        const uid = updated.metadata.uid
        const deleted = await this.call(name, () => this.storage.delete(key, uid ? { preconditions: { uid } } : {}))
        this.hooks.afterDelete?.(deleted, ctx)
        return deleted
      }
      // Encoding the answer is another pass over the object: others first, when it is large.
      await steps.pause()
      return updated
    } finally {
      finish(false)
    }
  }

  /**
   * A PUT of the object: `body` (a copy of it from `next`) replaces what is stored. When
   * nothing is stored, a kind whose upstream strategy allows create on update
   * creates it, admitted as a CREATE; the others answer 404.
   */
  async put(
    namespace: string,
    name: string,
    body: unknown,
    next: (current: KubeObject) => unknown,
    ctx: RequestContext,
    options: { answerOnly?: boolean } = {},
  ): Promise<{ object: KubeObject; created: boolean }> {
    // Upstream's update handler checks the body (its kind, its name against the URL's) before it looks the object up:
    // a mismatch is a 400 whether or not the object is stored. The attempts below check it again.
    if (isPlainObject(body)) this.refuseBody(body, namespace, name)
    for (let attempt = 1; ; attempt++) {
      try {
        return { object: await this.update(namespace, name, next, ctx, undefined, options), created: false }
      } catch (err) {
        if (!this.entry.strategy.allowCreateOnUpdate || !this.isNotFound(err, name)) throw err
      }
      try {
        // Upstream's update hands the body's transformations an empty object in place of the missing one.
        return { object: await this.create(namespace, await next({ metadata: {} }), ctx, { name }), created: true }
      } catch (err) {
        // Created meanwhile by another writer: upstream's guaranteed update starts over on it, and updates it.
        if (attempt > 1 || !(err instanceof StatusError && err.reason === 'AlreadyExists')) throw err
      }
    }
  }

  /**
   * The mutating phase of an update through a subresource whose object is of
   * another kind (a Scale): what the plugins made of `step.object`. Its caller
   * runs it in `next` and hands `update` the matching `admittedAs`.
   */
  admitAsSubresource(step: AdmissionStep & { object: KubeObject; subresource: string }, ctx: RequestContext): Promise<KubeObject> {
    return runMutatingAdmission(this.mutating, this.entry, step, ctx)
  }

  /** The 404 of this object itself (not of another one a write looked up). */
  private isNotFound(err: unknown, name: string): boolean {
    return err instanceof StatusError && err.code === 404 && err.details?.kind === this.entry.resource && err.details.name === name
  }

  /**
   * Server-side apply of `applied` for `ctx.fieldManager` (set `ctx.apply`):
   * merged into the stored object, or, when there is none, the object it
   * creates. Conflicts with other managers are 409s unless forced.
   */
  async apply(
    namespace: string,
    name: string,
    applied: Record<string, unknown>,
    ctx: RequestContext,
    subresource?: 'status' | 'approval' | 'finalize' | 'ephemeralcontainers' | 'resize',
  ): Promise<{ object: KubeObject; created: boolean }> {
    checkApplyVersion(applied, this.apiVersion)
    const meta = isPlainObject(applied['metadata']) ? applied['metadata'] : (applied['metadata'] = {})
    if (meta['name'] === undefined) meta['name'] = name
    else if (meta['name'] !== name)
      throw badRequest(`the name of the object (${String(meta['name'])}) does not match the name on the URL (${name})`)
    try {
      const merge = (current: KubeObject) => applyConfiguration(this.entry, this.apiVersion, current, applied, ctx, subresource)
      return { object: await this.update(namespace, name, merge, ctx, subresource), created: false }
    } catch (err) {
      if (subresource || !this.isNotFound(err, name)) throw err
    }
    const created = await applyConfiguration(this.entry, this.apiVersion, undefined, applied, ctx)
    return { object: await this.create(namespace, created, ctx, undefined, name), created: true }
  }

  private carryOverSystemFields(obj: KubeObject, current: KubeObject): void {
    const meta = obj.metadata
    const old = current.metadata
    if (!meta.uid && old.uid) meta.uid = old.uid
    if (old.creationTimestamp) meta.creationTimestamp = old.creationTimestamp
    if (old.generation !== undefined) meta.generation = old.generation
    else delete meta.generation
    if (old.deletionTimestamp) meta.deletionTimestamp = old.deletionTimestamp
    else delete meta.deletionTimestamp
    if (old.deletionGracePeriodSeconds !== undefined) meta.deletionGracePeriodSeconds = old.deletionGracePeriodSeconds
    else delete meta.deletionGracePeriodSeconds
  }

  /**
   * Upstream's generic Delete: graceful deletion, the garbage collector's
   * finalizers and the finalizers' hold decide whether the object goes now
   * or stays marked (see deletion.ts).
   */
  async delete(namespace: string, name: string, options: DeleteOptions, ctx: RequestContext): Promise<DeleteResult> {
    validateDeleteOptions(options)
    this.warnOfDefaultPropagation(options, ctx)
    await this.admitDelete(namespace, name, options, ctx)
    return this.deleteAdmitted(namespace, name, options, ctx)
  }

  private warnOfDefaultPropagation(options: DeleteOptions, ctx: RequestContext): void {
    const warning = this.entry.strategy.defaultPropagationWarning
    if (warning && namesNoPropagation(options)) (ctx.warnings ??= []).push(warning)
  }

  /** The mutating phase of a DELETE: no object, the options (upstream's delete handler calls it before the store). */
  private async admitDelete(namespace: string, name: string, options: DeleteOptions, ctx: RequestContext): Promise<void> {
    const step = { operation: 'DELETE' as const, object: undefined, namespace, name, options: { ...options } }
    await runMutatingAdmission(this.mutating, this.entry, step, ctx)
  }

  /** A delete whose mutating phase ran: the validating phase sees the stored object, then it goes. */
  private async deleteAdmitted(namespace: string, name: string, options: DeleteOptions, ctx: RequestContext): Promise<DeleteResult> {
    const key = this.key(namespace, name)
    const current = await this.get(namespace, name)
    checkDeletePreconditions(this.gr, current, options.preconditions)
    const step = { operation: 'DELETE' as const, old: current, namespace, name, options: { ...options } }
    await runValidatingAdmission(this.admission.validating, this.entry, step, ctx)
    // A resource's own way of going (a namespace's Terminating phase) comes first.
    const marked = this.entry.strategy.beforeDelete?.(cloneJson(current), this.strategyContext(ctx))
    if (marked) {
      if (ctx.dryRun || equalJson(marked, current)) return { object: marked, deleted: false }
      const stored = await this.call(name, () => this.storage.guaranteedUpdate(key, () => marked, preconditionsOf(current)))
      return { object: stored, deleted: false }
    }
    let plan = planDeletion(this.entry.strategy, current, options, ctx.now)
    // Already marked and still held (a second delete of an object with finalizers): nothing to do.
    if (plan.outcome === 'pending' || (plan.outcome === 'keep' && !plan.changed)) return { object: current, deleted: false }
    let latest = current
    if (plan.changed) {
      if (ctx.dryRun) return { object: plan.object, deleted: plan.outcome === 'delete' }
      const pre = { preconditions: { ...preconditionsOf(current).preconditions, ...options.preconditions } }
      latest = await this.call(name, () =>
        this.storage.guaranteedUpdate(
          key,
          (existing) => {
            // Planned again on what is stored now, since a write may have come in between.
            plan = planDeletion(this.entry.strategy, existing, options, ctx.now)
            return plan.changed ? plan.object : existing
          },
          pre,
        ),
      )
      if (plan.outcome !== 'delete') return { object: latest, deleted: false }
    }
    if (ctx.dryRun) return { object: current, deleted: true }
    const preconditions: Preconditions = { ...preconditionsOf(latest).preconditions, ...options.preconditions }
    // The object was just marked: its new resourceVersion is the one to delete.
    if (latest !== current && options.preconditions?.resourceVersion) preconditions.resourceVersion = latest.metadata.resourceVersion ?? ''
    const deleted = await this.call(name, () => this.storage.delete(key, { preconditions }))
    this.hooks.afterDelete?.(deleted, ctx)
    return { object: deleted, deleted: true }
  }

  async deleteCollection(namespace: string, query: ListQuery, options: DeleteOptions, ctx: RequestContext): Promise<KubeList> {
    validateDeleteOptions(options)
    this.warnOfDefaultPropagation(options, ctx)
    // Admitted once for the collection (no name), then each item's stored object in the validating phase, as upstream.
    await this.admitDelete(namespace, '', options, ctx)
    const { limit: _limit, continue: _continue, ...all } = query
    const list = await this.list(namespace, all)
    // `--delete-collection-workers` deletes run side by side; the answer keeps the list's order.
    const deleted = await inParallel(list.items, this.policy.deleteCollectionWorkers ?? 1, async (item) => {
      try {
        return (await this.deleteAdmitted(item.metadata.namespace ?? '', item.metadata.name ?? '', options, ctx)).object
      } catch (err) {
        // Deleted meanwhile by someone else: that is what was asked for.
        if (!hasStatusCode(err, 404)) throw err
        return undefined
      }
    })
    return { ...list, items: deleted.filter((o): o is KubeObject => o !== undefined) }
  }

  private async call<T>(name: string, op: () => Promise<T>, continuing = false): Promise<T> {
    try {
      return await op()
    } catch (err) {
      throw interpretStorageError(err, this.gr, name, continuing)
    }
  }
}

function preconditionsOf(obj: KubeObject): { preconditions: Preconditions } {
  const p: Preconditions = {}
  if (obj.metadata.uid) p.uid = obj.metadata.uid
  return { preconditions: p }
}

function equalJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b)
}

/**
 * Runs `op` over `items` with at most `workers` at a time; results in the
 * items' order. The first failure stops taking new items and is thrown once
 * the running ones end. Items whose `op` settles without I/O (an object
 * already marked and held by its finalizers) would otherwise run back to
 * back in one turn: the thread goes back to other requests between slices.
 */
async function inParallel<T, R>(items: readonly T[], workers: number, op: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length)
  const slice = new TimeSlice()
  let next = 0
  let failure: { err: unknown } | undefined
  const worker = async (): Promise<void> => {
    while (!failure && next < items.length) {
      await slice.pause()
      if (failure || next >= items.length) break
      const i = next++
      try {
        results[i] = await op(items[i] as T)
      } catch (err) {
        failure ??= { err }
      }
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(workers, items.length)) }, worker))
  if (failure) throw failure.err
  return results
}

/**
 * `obj` as upstream's struct encodes it (asGoEncodes). A large object is
 * copied in steps, and marked for its store to encode in steps too.
 */
function goEncoded(obj: KubeObject, steps: WriteSteps): KubeObject | Promise<KubeObject> {
  return steps.sliced ? steps.run(asGoEncodesInSteps(obj)).then(markedLarge) : asGoEncodes(obj)
}

/**
 * The match a list reads with. A page (a positive limit) at a resourceVersion
 * other than "0", sent without resourceVersionMatch, reads at exactly that
 * revision, as upstream's storage has always read one: clients from before
 * resourceVersionMatch page through a list that way.
 */
function listMatch(query: ListQuery): ListQuery['resourceVersionMatch'] {
  if (query.resourceVersionMatch) return query.resourceVersionMatch
  const { resourceVersion: rv, limit } = query
  return limit !== undefined && limit > 0 && rv !== undefined && rv !== '0' ? 'Exact' : undefined
}

/**
 * What the server sets on an object it creates, after mutating admission as
 * upstream's BeforeCreate sets it (a mutating webhook sees an object without
 * a uid or a creation time, and an empty name where the client asked for a
 * generated one; what it sets of these is replaced): the generated name, a
 * new uid, the creation time, and no deletion marks.
 */
function fillSystemFields(meta: KubeObject['metadata'], now: Date): void {
  delete meta.deletionTimestamp
  delete meta.deletionGracePeriodSeconds
  meta.uid = crypto.randomUUID()
  meta.creationTimestamp = formatTimestamp(now)
  if (!meta.name && meta.generateName) meta.name = generateName(meta.generateName)
}
