/**
 * Start-up templates on a persistent store (etcd, the embedded store).
 *
 * A server started on an empty store writes some 180 objects before it is
 * healthy (the RBAC policy, the flow schemas and priority levels, the local
 * APIServices, the system namespaces and their service accounts, the
 * priority classes, the `kubernetes` Service), each through the whole
 * write path. Test harnesses (envtest, kube-api-test) start every suite on
 * a fresh etcd, so every suite pays for that. The first such start with
 * given settings keeps what its start-up stored; a later start with the
 * same settings on an empty store writes those objects straight to the
 * store, and its start-up then runs as a restart's does: it finds the
 * objects in place, reconciles what it owns, and writes only what differs
 * (the `kubernetes` Service's port) and what each server writes for itself.
 *
 * What a template writes is fresh: every uid is new (references between
 * the objects follow), and every time written during the start the
 * template was taken from is now. Nothing of a client's is ever kept: the
 * template is the store's state when start-up was done, before the server
 * listened, read at that revision.
 * Each object is created only where its key is free, so two servers
 * starting on one empty store at once write each object once.
 */
import type { KubeObject } from '../machinery/object.js'
import type { Logger } from '../logging/logger.js'
import type { StorageFactory, StorageResource } from './factory.js'
import { createOneByOne } from './create-many.js'
import type { Storage } from './interface.js'
import { primedFactory, writtenState } from './primed-storage.js'

/** Text kept under a key beyond the process (start-up templates); a key it cannot read answers undefined. */
export interface StartupTemplateFiles {
  read(key: string): string | undefined
  /** Keeps `text` under `key`; never throws (a template that cannot be kept is not kept). */
  write(key: string, text: string): void
}

/** The layout of a template's text; text of another layout is not used. */
const TEMPLATE_FORMAT = 1

/** The resources each server writes for itself at start (its leases and address leases) or on its own (events), by key segment. */
export const PER_SERVER_RESOURCES = ['leases', 'masterleases', 'events']
const PER_SERVER_PREFIXES = PER_SERVER_RESOURCES.map((resource) => `${resource}/`)
/**
 * And the objects each server writes of its own address and port, and of the CA bundles it was given, and the day
 * the cluster began tracking legacy tokens (this cluster's, not the template's), by key below the root.
 */
const PER_SERVER_KEYS = new Set([
  'services/endpoints/default/kubernetes',
  'endpointslices/default/kubernetes',
  'configmaps/kube-system/extension-apiserver-authentication',
  'configmaps/kube-system/kube-apiserver-legacy-service-account-token-tracking',
])

/** Times within this much of the template's start-up window were written by that start-up. */
const WINDOW_SLACK_MS = 1000

/**
 * A JSON string that is a whole uid, or a whole time in RFC 3339 (UTC, as
 * Kubernetes writes its times: seconds, or micro- and nanoseconds).
 */
const UID_OR_TIME_STRING = /"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"|"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z)"/g

export interface StoredTemplateTarget {
  /** The store all of the server's keys are in. */
  readonly storage: Storage
  /** Each resource's storage, as the server would be given it. */
  readonly factory: StorageFactory
  /** Where keys start, without a trailing slash. */
  readonly root: string
  /** Where templates are kept. */
  readonly files: StartupTemplateFiles
  /** The settings the start-up depends on, as text: equal text, equal start-up. */
  readonly key: string
  /** When this start began (ms since the epoch): the start of the window whose times a template makes fresh. */
  readonly startedAt: number
  readonly now: () => Date
  readonly logger: Logger
}

export interface StoredStartup {
  /** What the server is to store through: the factory given, which tells a start that keeps a template what resources exist. */
  readonly factory: StorageFactory
  /** How many objects a template wrote; 0 when none was used. */
  readonly written: number
  /** The template was written whole on the empty store, with nothing else written between: the store holds what its start-up left. */
  readonly whole: boolean
  /**
   * Once start-up is done and before the first request: notes the store's
   * revision, whose state is then start-up's alone. The function returned
   * keeps that state as the template, read at that revision (when this
   * start began on an empty store without one): call it once the server
   * serves, off the path of its first requests.
   */
  startupDone(): Promise<() => Promise<void>>
}

interface TemplateText {
  format: typeof TEMPLATE_FORMAT
  /** The window of the start-up the template was taken from (ms since the epoch). */
  from: number
  to: number
  objects: [key: string, obj: KubeObject][]
}

const nothingToKeep = async (): Promise<() => Promise<void>> => async () => {}

/**
 * Before the server is made: on an empty store, writes the template kept
 * under `target.key`, or else returns a factory that follows which
 * resources the start-up stores, for `startupDone` to keep them.
 */
export async function beginStoredStartup(target: StoredTemplateTarget): Promise<StoredStartup> {
  const unchanged = { factory: target.factory, written: 0, whole: false, startupDone: nothingToKeep }
  // Asked first: a template written whole right after it, with nothing else between, is the store's whole state.
  const emptyAt = await target.storage.currentRevision()
  if ((await target.storage.count(`${target.root}/`)) > 0) return unchanged
  const text = target.files.read(target.key)
  const template = parseTemplate(text)
  if (template && text !== undefined) {
    const objects = freshObjects(template, text, target.now())
    const revisions = await writeTemplate(target, objects)
    const written = revisions.filter((r) => r > 0).length
    // Each object written, and the writes' revisions the ones right after the empty store's (a backend may write
    // several objects at one revision): nobody else wrote.
    const newest = Math.max(...revisions)
    if (written !== objects.length || newest !== emptyAt + new Set(revisions).size) return { ...unchanged, written }
    const factory = primedFactory(target.factory, target.storage, { objects: writtenState(objects, revisions), revision: newest })
    const startupDone = async () => {
      factory.release()
      return nothingToKeep()
    }
    return { factory, written, whole: true, startupDone }
  }
  const resources = new Map<string, Storage>()
  const factory: StorageFactory = {
    storageFor(resource: StorageResource): Storage {
      const storage = target.factory.storageFor(resource)
      resources.set(resource.prefix, storage)
      return storage
    },
  }
  return {
    factory,
    written: 0,
    whole: false,
    async startupDone() {
      const revision = await target.storage.currentRevision()
      const done = target.now().getTime()
      return async () => {
        try {
          const objects = await storedObjects(resources, target.root, revision)
          const text: TemplateText = { format: TEMPLATE_FORMAT, from: target.startedAt, to: done, objects }
          target.files.write(target.key, JSON.stringify(text))
        } catch (err) {
          // A template is an optimisation (and the revision may be compacted away by now): the next start keeps one.
          target.logger.warn({ err: String(err) }, 'cannot keep the start-up template')
        }
      }
    },
  }
}

/** Every object stored under the prefixes at `revision`, with its key, but for what each server writes for itself. */
async function storedObjects(resources: ReadonlyMap<string, Storage>, root: string, revision: number): Promise<[string, KubeObject][]> {
  const objects: [string, KubeObject][] = []
  for (const [prefix, storage] of resources) {
    const below = prefix.slice(root.length + 1)
    if (PER_SERVER_PREFIXES.some((p) => below.startsWith(p))) continue
    for (const item of (await storage.list(prefix, { resourceVersion: String(revision), resourceVersionMatch: 'Exact' })).items) {
      const { namespace, name } = item.metadata ?? {}
      const key = `${prefix}${namespace ? `${namespace}/` : ''}${name}`
      if (PER_SERVER_KEYS.has(key.slice(root.length + 1))) continue
      const { resourceVersion: _stored, ...metadata } = item.metadata ?? {}
      objects.push([key, { ...item, metadata }])
    }
  }
  return objects
}

function parseTemplate(text: string | undefined): TemplateText | undefined {
  if (text === undefined) return undefined
  try {
    const parsed = JSON.parse(text) as Partial<TemplateText>
    const wellFormed =
      parsed.format === TEMPLATE_FORMAT &&
      Number.isFinite(parsed.from) &&
      Number.isFinite(parsed.to) &&
      Array.isArray(parsed.objects) &&
      parsed.objects.every((entry) => Array.isArray(entry) && typeof entry[0] === 'string' && typeof entry[1] === 'object' && entry[1] !== null)
    return wellFormed ? (parsed as TemplateText) : undefined
  } catch {
    // Another layout, or a file cut short: this start bootstraps in full and keeps a template of its own.
    return undefined
  }
}

/**
 * The template's objects as a start at `now` would have made them: a new
 * uid for each (and for each reference to one), and `now` for every time
 * the template's own start-up wrote. Rewritten in the template's text, one
 * pass over the JSON strings that are a whole uid or a whole time, then
 * parsed: at start-up, with the code still interpreted, a third of the
 * time of a walk over the parsed objects.
 */
function freshObjects(template: TemplateText, text: string, now: Date): [string, KubeObject][] {
  const uids = new Map<string, string>()
  for (const [, obj] of template.objects) {
    const uid = obj.metadata?.uid
    if (typeof uid === 'string') uids.set(uid, crypto.randomUUID())
  }
  const from = template.from - WINDOW_SLACK_MS
  const to = template.to + WINDOW_SLACK_MS
  const fresh = text.replace(UID_OR_TIME_STRING, (whole, uid: string | undefined, time: string | undefined, fraction: string | undefined) => {
    if (uid) {
      const renewed = uids.get(uid)
      return renewed ? `"${renewed}"` : whole
    }
    const at = Date.parse(time!)
    return at >= from && at <= to ? `"${timeText(now, fraction?.length ?? 0)}"` : whole
  })
  return (JSON.parse(fresh) as TemplateText).objects
}

/** `now` in RFC 3339 with as many fraction characters (the dot included) as the time it replaces. */
function timeText(now: Date, fractionLength: number): string {
  const iso = now.toISOString() // 2026-11-26T05:21:19.123Z
  if (fractionLength === 0) return `${iso.slice(0, 19)}Z`
  return `${iso.slice(0, 19)}${`${iso.slice(19, 23)}000000`.slice(0, fractionLength)}Z`
}

/**
 * Creates each object where its key is free, in as few writes as the
 * store can. Another writer on the store (a second server starting at
 * once) stops the writing: its start-up, and this one's, write what is
 * missing.
 */
async function writeTemplate(target: StoredTemplateTarget, objects: readonly [string, KubeObject][]): Promise<number[]> {
  const { storage } = target
  try {
    return await (storage.createMany ? storage.createMany(objects) : createOneByOne(storage, objects))
  } catch (err) {
    target.logger.warn({ err: String(err) }, 'cannot write the start-up template; start-up writes what is missing')
    return []
  }
}
