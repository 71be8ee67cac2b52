/**
 * A resource is one entry (docs/architecture.md). Discovery, OpenAPI, routing,
 * validation and table columns all derive from these entries; the generic
 * registry never switches on a resource's name.
 */
import type { WriteAuthorization } from '../authz/rbac/escalation.js'
import type { JSONSchemaProps } from '../crd-schema/schema.js'
import type { FieldError } from '../machinery/field.js'
import type { KubeObject, UserInfo } from '../machinery/object.js'
import type { Checkpointed } from '../machinery/time-slice.js'

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection'

export const ALL_VERBS: readonly Verb[] = [
  'create',
  'delete',
  'deletecollection',
  'get',
  'list',
  'patch',
  'update',
  'watch',
]

export interface TableColumn {
  name: string
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date'
  format?: string
  description: string
  /** 0: always shown; 1: only with `-o wide` */
  priority: number
  /**
   * The cell for one object; the server always fills every column, wide ones
   * included. `row` is shared by the cells of one row: what the JSONPath
   * columns of a custom resource have spent evaluating (crd/jsonpath.ts).
   */
  cell: (obj: KubeObject, now: Date, row?: RowBudget) => unknown
}

/** The work a table row's cells have done together, counted by those that bound it. */
export interface RowBudget {
  spent: number
}

/** What a strategy hook may know about the request it runs in. */
export interface StrategyContext {
  user: UserInfo
  now: Date
  /** The namespace of the request's URL, for namespaced virtual resources (LocalSubjectAccessReview). */
  namespace?: string
  /** The object's name as the request's URL gives it, for a create by PUT or apply (a POST names none). */
  urlName?: string
  /** `--allow-privileged`: pod specs may ask for privileged containers. */
  allowPrivileged?: boolean
  /** Feature gate CoordinatedLeaderElection (Leases keep strategy and preferredHolder). */
  coordinatedLeaderElection?: boolean
  /** The server's authorizer and RBAC rules, for writes that check what the writer may grant (roles, bindings). */
  authorization?: WriteAuthorization
  /** The request's audit annotations and the answer's warnings, for what a review's authenticators note (TokenReview). */
  notes?: { readonly annotations: Record<string, string>; readonly warnings: string[] }
}

/**
 * Per-resource behaviour, as upstream's `rest.RESTCreateStrategy` and friends.
 * Every hook is optional; the generic registry supplies the metadata rules.
 */
export interface Strategy {
  /**
   * Turns the wire form into the stored form (e.g. folds a Secret's
   * stringData into data). Throws a 400 where upstream's decoder would.
   */
  normalize?(obj: KubeObject): void
  /**
   * Clears fields a client may not set on create (status) and sets initial
   * values. This hook, applyDefaults, validate and validateUpdate may answer
   * with their work as a checkpointed generator instead (a kind whose
   * objects hold lists as long as a body allows: a pod's containers), which
   * the registry runs in slices for a large object, at once otherwise.
   */
  prepareForCreate?(obj: KubeObject, ctx: StrategyContext): void | Checkpointed<void>
  /** Carries over what an update may not change (status), from `old` into `obj`. */
  prepareForUpdate?(obj: KubeObject, old: KubeObject, ctx: StrategyContext): void
  /**
   * What upstream's defaulters add to a created object when its storage
   * decodes it again (for the create's answer and every read after), where
   * the strategy filled in what they read only after the request was
   * decoded: a Job's labels, copied from the selector labels its template
   * was given. Answers the object with them (a shallow copy, which the
   * store puts in Go's order again), or undefined when they add nothing.
   * Applied after validating admission, which sees the object as
   * upstream's plugins do, without them.
   */
  readBack?(obj: KubeObject): KubeObject | undefined
  /**
   * May this writer store this object at all (upstream's policy-based
   * storage: the RBAC escalation checks)? Asked after mutating admission and
   * before the object is prepared and validated, for creates (`old`
   * undefined) and updates; throws a StatusError to refuse.
   */
  authorizeWrite?(obj: KubeObject, old: KubeObject | undefined, ctx: StrategyContext): Promise<void>
  /** Fills defaults, as upstream's `SetDefaults_*` for the stored version. */
  applyDefaults?(obj: KubeObject): void | Checkpointed<void>
  /**
   * Work the validation needs that cannot be done synchronously (a
   * certificate request's signature, checked with Web Crypto): awaited just
   * before validate or validateUpdate (a subresource's too), on the objects
   * they are given (`old` for updates), for them to read back what it found.
   */
  prepareValidation?(obj: KubeObject, old?: KubeObject): Promise<void>
  validate?(obj: KubeObject, ctx: StrategyContext): FieldError[] | Checkpointed<FieldError[]>
  validateUpdate?(obj: KubeObject, old: KubeObject, ctx: StrategyContext): FieldError[] | Checkpointed<FieldError[]>
  /**
   * Called when a delete is requested. Return the object to store instead of
   * deleting it (graceful deletion, finalizers), or undefined to delete now.
   */
  beforeDelete?(obj: KubeObject, ctx: StrategyContext): KubeObject | undefined
  /**
   * Graceful deletion (upstream's CheckGracefulDelete): the grace period in
   * seconds a delete gets, from the requested one; undefined deletes at once.
   */
  checkGracefulDelete?(obj: KubeObject, gracePeriodSeconds: number | undefined): number | undefined
  /**
   * Upstream's DefaultGarbageCollectionPolicy of OrphanDependents, which core/v1 ReplicationControllers and batch/v1
   * Jobs keep for compatibility with clients older than the garbage collector: a delete that names no propagation
   * policy (and an object without the collector's finalizers) orphans the dependents instead of deleting them.
   */
  orphanDependentsByDefault?: boolean
  /** The warning a delete gets that leaves the propagation to that default (upstream's Job REST warns). */
  defaultPropagationWarning?: string
  /** Finalizers kept outside metadata.finalizers (a namespace's spec.finalizers) that still hold the object. */
  hasPendingFinalizers?(obj: KubeObject): boolean
  /** Fields selectable with `fieldSelector` beyond metadata.name and metadata.namespace. */
  fieldSet?(obj: KubeObject): Record<string, string>
  /**
   * How upstream refuses a field label this kind does not select, for the
   * kinds with a field label conversion of their own (these select
   * metadata.namespace only when namespaced). Unset: upstream's default
   * conversion, which names the two metadata fields every kind selects.
   */
  fieldLabelRefusal?(label: string): string
  /**
   * Upstream's AllowUnconditionalUpdate: whether an update without a
   * resourceVersion (or with "0") writes over whatever is stored. Default
   * true; false makes such an update a 422 (`metadata.resourceVersion: must
   * be specified for an update`).
   */
  allowUnconditionalUpdate?: boolean
  /**
   * Upstream's AllowCreateOnUpdate: whether a PUT of an object that is not
   * stored creates it (201), admitted as a CREATE and authorized as a
   * `create` too. Default false: such a PUT is a 404.
   */
  allowCreateOnUpdate?: boolean
}

export interface SubresourceEntry {
  name: string
  kind: string
  group?: string
  version?: string
  verbs: Verb[]
  /** A streaming or proxying endpoint (exec, log, proxy): no object schema of its own in OpenAPI. */
  connect?: boolean
  /**
   * `status` only: the metadata a write through it takes from the stored
   * object instead of the request's, as the resource's upstream status
   * strategy resets it (its PrepareForUpdate); 'all' keeps the stored
   * metadata whole but the managed fields. Everything outside metadata and
   * status always stays as stored. Default: none, the request's labels,
   * annotations, owners and finalizers are stored.
   */
  keepsStoredMetadata?: readonly StatusKeptMetadata[] | 'all'
  /**
   * An update through this subresource (upstream's per-subresource strategy):
   * what it takes of the written object, the rest kept as stored. Given, the
   * main strategy's prepareForUpdate does not run.
   */
  narrowUpdate?(obj: KubeObject, old: KubeObject): KubeObject
  /**
   * What its upstream strategy's PrepareForUpdate settles beyond keeping the
   * stored spec and metadata (a pod's status write keeps the stored QoS
   * class when it sends none): run after mutating admission, before validation.
   */
  prepareForUpdate?(obj: KubeObject, old: KubeObject, ctx: StrategyContext): void
  /** Its validation of an update through it, in place of the strategy's validateUpdate (with or without `narrowUpdate`). */
  validateUpdate?(obj: KubeObject, old: KubeObject, ctx: StrategyContext): FieldError[]
  /**
   * Set when a server-side apply through this subresource is served: the
   * field paths (`*` for any list item) a writer may own through it, all
   * else reset by `narrowUpdate` (upstream's GetResetFieldsFilter).
   */
  ownedFields?: readonly (readonly string[])[]
}

/** Metadata a status strategy may reset to the stored values. */
export type StatusKeptMetadata = 'labels' | 'annotations' | 'finalizers' | 'ownerReferences' | 'deletionTimestamp' | 'generation'

/**
 * What upstream's metav1.ResetObjectMetaForStatus puts back (the newer
 * status strategies call it); selfLink is never stored here.
 */
export const RESET_OBJECT_META_FOR_STATUS: readonly StatusKeptMetadata[] = ['deletionTimestamp', 'generation', 'labels', 'annotations', 'finalizers', 'ownerReferences']

/**
 * How objects served in one version are kept in another (upstream stores
 * every version of a resource once, in its storage version, and converts per
 * request). The store sees only the served version: `toStorage` runs on the
 * way in, `fromStorage` on the way out.
 */
export interface VersionConversion {
  /** `group/version` of the stored form, e.g. `autoscaling/v2`. */
  storageVersion: string
  /** Custom resources may convert through a webhook: then the answer is a promise. */
  toStorage(obj: KubeObject): KubeObject | Promise<KubeObject>
  fromStorage(obj: KubeObject): KubeObject | Promise<KubeObject>
  /**
   * For conversions that answer with promises: the stored object as label and
   * field selectors see it, computed at once (selectors run synchronously
   * inside the storage while it pages).
   */
  forSelection?(stored: KubeObject): KubeObject
  /** Many stored objects at once (a list page), when one call is cheaper than one per object. */
  fromStorageAll?(stored: readonly KubeObject[]): Promise<KubeObject[]>
}

/** A conversion done in code, at once (the built-in kinds' versions). */
export interface LocalVersionConversion extends VersionConversion {
  toStorage(obj: KubeObject): KubeObject
  fromStorage(obj: KubeObject): KubeObject
}

/**
 * Where a custom resource keeps what its `scale` subresource shows (the
 * CRD's `subresources.scale`): JSON paths such as `.spec.replicas`.
 */
export interface ScalePaths {
  specReplicasPath: string
  statusReplicasPath: string
  labelSelectorPath?: string
}

/** A create-only resource that computes its answer instead of storing it (access reviews). */
export type VirtualCreate = (obj: KubeObject, ctx: StrategyContext) => Promise<KubeObject> | KubeObject

export interface ResourceEntry {
  group: string
  version: string
  kind: string
  listKind: string
  /** lowercase plural, the URL segment */
  resource: string
  singular: string
  shortNames?: string[]
  categories?: string[]
  namespaced: boolean
  /** An alpha API, served only when `--runtime-config` enables it (upstream's default for alpha versions). */
  offByDefault?: boolean
  verbs: readonly Verb[]
  subresources?: SubresourceEntry[]
  /** The type's name in the type tables (resources/schema). */
  typeName: string
  /** Problems with a proposed name (DNS-1123 subdomain, label, path segment ...). */
  validateName: (name: string) => string[]
  strategy: Strategy
  /**
   * Reads a body as upstream's JSON decoder reads it into the kind's type,
   * before any strategy hook: a value of the wrong type is a 400, unknown
   * fields and nulls are dropped. Returns the dropped unknown fields' paths
   * (`spec.containers[0].colour`) for field validation; or its work, as a
   * checkpointed generator that yields them (a built-in kind's decoding, in
   * steps for a large body).
   */
  decode?: (obj: KubeObject) => string[] | Checkpointed<string[]>
  /**
   * The table columns in upstream's order, NAME and AGE included where
   * upstream puts them (see resources/columns/common.ts). Empty: upstream's
   * default table, NAME and CREATED AT.
   */
  columns: TableColumn[]
  /** Set for create-only virtual resources. */
  virtualCreate?: VirtualCreate
  /**
   * Set for resources upstream computes when asked instead of storing them
   * (component statuses): discovery gives them no storageVersionHash.
   */
  computed?: boolean
  /**
   * The release that deprecated this kind (upstream's prerelease-lifecycle
   * `deprecated` tag) and what replaces it: from that release on, every
   * answer about it carries upstream's deprecation warning.
   */
  deprecated?: { major: number; minor: number; replacement?: string }
  /**
   * Where the objects live under the storage prefix, as upstream lays them
   * out (`services/specs`, `minions`, `apiregistration.k8s.io/apiservices`).
   * Default: the resource name.
   */
  storagePath?: string
  /**
   * The group a refused write's 422 names the kind with, when it is not the
   * entry's own: upstream names the internal type it validated, and
   * events.k8s.io events are validated as core events (`Event "x" is invalid`).
   */
  invalidKindGroup?: string
  /**
   * metadata.generation starts at 1 and counts the changes to everything but
   * metadata and status; 'at-creation': starts at 1 and stays there, as
   * upstream's PriorityClass strategy leaves it.
   */
  tracksGeneration?: boolean | 'at-creation'
  /** Set when this version's objects are stored in another version's form. */
  conversion?: VersionConversion
  /**
   * Set for custom resources: the version's structural schema
   * (`openAPIV3Schema`), which drives OpenAPI and server-side apply in place
   * of a type table entry. Strategic merge patch is refused for them.
   */
  schema?: JSONSchemaProps
  /** A custom resource's scale subresource paths; built-in kinds read spec.replicas and status.replicas. */
  scalePaths?: ScalePaths
}

/** The key path of an entry's objects under the storage prefix. */
export function storagePath(entry: ResourceEntry): string {
  return entry.storagePath ?? entry.resource
}

function pathOf(e: { group: string; version: string; resource: string }): string {
  return `${e.group}/${e.version}/${e.resource}`
}

/** `v1` for core, `apps/v1` otherwise. */
export function groupVersion(entry: { group: string; version: string }): string {
  return entry.group ? `${entry.group}/${entry.version}` : entry.version
}

/** What a change of the catalogue added and removed. */
export interface CatalogueChange {
  added: readonly ResourceEntry[]
  removed: readonly ResourceEntry[]
}

/**
 * The lookup of every served resource: the built-in entries from start-up,
 * and custom resources added and removed at run time as their definitions
 * come and go. `generation` counts the changes, so that what is derived
 * from the entries (OpenAPI documents) knows when to build again.
 */
export class Catalogue {
  private readonly byPath = new Map<string, ResourceEntry>()
  private readonly listeners = new Set<(change: CatalogueChange) => void>()
  private list: readonly ResourceEntry[]
  private changes = 0

  constructor(entries: readonly ResourceEntry[]) {
    this.list = entries
    for (const e of entries) this.byPath.set(pathOf(e), e)
  }

  get entries(): readonly ResourceEntry[] {
    return this.list
  }

  get generation(): number {
    return this.changes
  }

  /**
   * Puts `added` in place of `removed` in one step: an entry whose
   * group/version/resource is already served replaces the one before.
   */
  replace(removed: readonly ResourceEntry[], added: readonly ResourceEntry[]): void {
    const gone = new Set(removed)
    for (const e of added) {
      const before = this.byPath.get(pathOf(e))
      if (before) gone.add(before)
    }
    if (!gone.size && !added.length) return
    this.list = [...this.list.filter((e) => !gone.has(e)), ...added]
    for (const e of gone) if (this.byPath.get(pathOf(e)) === e) this.byPath.delete(pathOf(e))
    for (const e of added) this.byPath.set(pathOf(e), e)
    this.changes += 1
    const change = { added, removed: [...gone] }
    for (const listener of [...this.listeners]) listener(change)
  }

  /** Calls `listener` after every change; returns the way to stop. */
  onChange(listener: (change: CatalogueChange) => void): () => void {
    this.listeners.add(listener)
    return () => void this.listeners.delete(listener)
  }

  lookup(group: string, version: string, resource: string): ResourceEntry | undefined {
    return this.byPath.get(`${group}/${version}/${resource}`)
  }

  /** Group/versions in the order discovery lists them (core first). */
  groupVersions(): { group: string; version: string }[] {
    const seen = new Map<string, { group: string; version: string }>()
    for (const e of this.entries) seen.set(`${e.group}/${e.version}`, { group: e.group, version: e.version })
    return [...seen.values()]
  }

  hasGroupVersion(group: string, version: string): boolean {
    return this.entries.some((e) => e.group === group && e.version === version)
  }

  inGroupVersion(group: string, version: string): ResourceEntry[] {
    return this.entries.filter((e) => e.group === group && e.version === version)
  }
}
