/**
 * A resource is one entry (DESIGN.md section 6). Discovery, OpenAPI, routing,
 * validation and table columns all derive from these entries; the generic
 * registry never switches on a resource's name.
 */
import type { FieldError } from '../validation/field.js'
import type { KubeObject, UserInfo } from './object.js'

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
  /** The cell for one object; the server always fills every column, wide ones included. */
  cell: (obj: KubeObject, now: Date) => unknown
}

/** What a strategy hook may know about the request it runs in. */
export interface StrategyContext {
  user: UserInfo
  now: Date
  /** The namespace of the request's URL, for namespaced virtual resources (LocalSubjectAccessReview). */
  namespace?: string
  /** `--allow-privileged`: pod specs may ask for privileged containers. */
  allowPrivileged?: boolean
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
  /** Clears fields a client may not set on create (status) and sets initial values. */
  prepareForCreate?(obj: KubeObject, ctx: StrategyContext): void
  /** Carries over what an update may not change (status), from `old` into `obj`. */
  prepareForUpdate?(obj: KubeObject, old: KubeObject, ctx: StrategyContext): void
  /** Fills defaults, as upstream's `SetDefaults_*` for the stored version. */
  applyDefaults?(obj: KubeObject): void
  validate?(obj: KubeObject, ctx: StrategyContext): FieldError[]
  validateUpdate?(obj: KubeObject, old: KubeObject, ctx: StrategyContext): FieldError[]
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
  /** Finalizers kept outside metadata.finalizers (a namespace's spec.finalizers) that still hold the object. */
  hasPendingFinalizers?(obj: KubeObject): boolean
  /** Fields selectable with `fieldSelector` beyond metadata.name and metadata.namespace. */
  fieldSet?(obj: KubeObject): Record<string, string>
}

export interface SubresourceEntry {
  name: string
  kind: string
  group?: string
  version?: string
  verbs: Verb[]
  /** A streaming or proxying endpoint (exec, log, proxy): no object schema of its own in OpenAPI. */
  connect?: boolean
}

/**
 * How objects served in one version are kept in another (upstream stores
 * every version of a resource once, in its storage version, and converts per
 * request). The store sees only the served version: `toStorage` runs on the
 * way in, `fromStorage` on the way out.
 */
export interface VersionConversion {
  /** `group/version` of the stored form, e.g. `autoscaling/v2`. */
  storageVersion: string
  toStorage(obj: KubeObject): KubeObject
  fromStorage(obj: KubeObject): KubeObject
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
   * (`spec.containers[0].colour`) for field validation.
   */
  decode?: (obj: KubeObject) => string[]
  /**
   * The table columns in upstream's order, NAME and AGE included where
   * upstream puts them (see resources/columns/common.ts). Empty: upstream's
   * default table, NAME and CREATED AT.
   */
  columns: TableColumn[]
  /** Set for create-only virtual resources. */
  virtualCreate?: VirtualCreate
  /**
   * Where the objects live under the storage prefix, as upstream lays them
   * out (`services/specs`, `minions`, `apiregistration.k8s.io/apiservices`).
   * Default: the resource name.
   */
  storagePath?: string
  /** metadata.generation starts at 1 and counts the changes to everything but metadata and status. */
  tracksGeneration?: boolean
  /** Set when this version's objects are stored in another version's form. */
  conversion?: VersionConversion
}

/** The key path of an entry's objects under the storage prefix. */
export function storagePath(entry: ResourceEntry): string {
  return entry.storagePath ?? entry.resource
}

/** `v1` for core, `apps/v1` otherwise. */
export function groupVersion(entry: { group: string; version: string }): string {
  return entry.group ? `${entry.group}/${entry.version}` : entry.version
}

/** The lookup the server builds once from its entries. */
export class Catalogue {
  private readonly byPath = new Map<string, ResourceEntry>()
  readonly entries: readonly ResourceEntry[]

  constructor(entries: readonly ResourceEntry[]) {
    this.entries = entries
    for (const e of entries) this.byPath.set(`${e.group}/${e.version}/${e.resource}`, e)
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
