/**
 * The OpenAPI documents of aggregated APIServices, downloaded in the
 * background as upstream's OpenAPI aggregation controllers do
 * (kube-aggregator's controllers/openapi and controllers/openapiv3): the
 * first download a second after the APIService appears, then one a minute
 * (`If-None-Match` with the extension's ETag, so an unchanged document is a
 * 304), a failure retried with a backoff doubling up to an hour, and at once
 * when a failing APIService changes (it became Available). Requests go
 * through the aggregator's proxy as `system:aggregator`, so they carry its
 * client certificate and X-Remote-User, verify the serving certificate, and
 * an unavailable APIService is not asked at all.
 *
 * A server that publishes no `/openapi/v3` has its v2 document converted
 * (openapi-v2-to-v3.ts) for its group/version, as upstream does.
 *
 * As upstream, a failed download keeps the last good document (an extension
 * server that went away still has its paths in /openapi/v2), and deleting
 * the APIService drops them. What is kept is bounded: a document larger than
 * MAX_OPENAPI_BYTES, nested deeper than MAX_OPENAPI_DEPTH or slower than
 * DOWNLOAD_TIMEOUT_MS is a failed download, and one download per APIService
 * runs at a time, never on a client's request.
 */
import { JsonTooDeepError, parseJsonInSlices } from '../machinery/json-in-slices.js'
import { runInSlices } from '../machinery/time-slice.js'
import { isPlainObject, type UserInfo } from '../machinery/object.js'
import type { Logger } from '../logging/logger.js'
import type { ApiService } from './apiservice.js'
import { openApiV2ToV3InSteps } from './openapi-v2-to-v3.js'
import { readBounded } from './read-bounded.js'

export type OpenApiDocument = Record<string, unknown>

/** An aggregated APIService's `/openapi/v2` document and its ETag. */
export interface AggregatedV2Spec {
  name: string
  doc: OpenApiDocument
  etag: string
}

/** An aggregated group/version's OpenAPI v3 document, under its index key (`apis/<group>/<version>`). */
export interface AggregatedV3Spec {
  key: string
  doc: OpenApiDocument
  /** The `hash` of the extension's own index entry (or of the document, when it gives none). */
  hash: string
}

export interface AggregatedOpenApi {
  /** The v2 documents kept, in upstream's merge order: by group priority (highest first), then APIService name. */
  v2(): AggregatedV2Spec[]
  /** The v3 documents kept, by index key. */
  v3(): ReadonlyMap<string, AggregatedV3Spec>
}

export interface OpenApiSpecsDeps {
  proxy: (request: Request, api: ApiService, user: UserInfo) => Promise<Response>
  logger: Logger
  /** How long after a successful download the next one starts (upstream: a minute); also the first backoff. */
  intervalMs: number
}

export interface OpenApiSpecs extends AggregatedOpenApi {
  /** Follows an aggregated APIService (added or changed). */
  track(api: ApiService): void
  /** Drops an APIService's documents (deleted, or its group/version is served locally). */
  forget(name: string): void
  stop(): void
}

/** Upstream's delay before the first download of a new APIService. */
const FIRST_DOWNLOAD_DELAY_MS = 1000
/** Upstream's longest wait between failed downloads. */
const MAX_BACKOFF_MS = 3_600_000
/** Upstream's specDownloadTimeout. */
const DOWNLOAD_TIMEOUT_MS = 60_000
/** A document larger than this is not kept (upstream reads any size). */
export const MAX_OPENAPI_BYTES = 16 * 1024 * 1024
/** Real OpenAPI documents nest a few dozen levels; merging and encoding them recurse. */
export const MAX_OPENAPI_DEPTH = 128
/** Upstream's downloaders ask as this user, with no groups. */
const AGGREGATOR_USER: UserInfo = { username: 'system:aggregator', groups: [] }
/** Marks an ETag this server made up for a document served without one: never sent back as If-None-Match. */
const LOCAL_ETAG_PREFIX = '"local-'

type Download = { kind: 'unchanged' } | { kind: 'absent' } | { kind: 'document'; doc: OpenApiDocument; etag: string }

interface Tracked {
  api: ApiService
  v2?: { doc: OpenApiDocument; etag: string }
  v3?: AggregatedV3Spec & { etag: string }
  failures: number
  timer?: ReturnType<typeof setTimeout>
  running: boolean
  abort: AbortController
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('')
}

export function followOpenApiSpecs(deps: OpenApiSpecsDeps): OpenApiSpecs {
  const tracked = new Map<string, Tracked>()

  const download = async (entry: Tracked, path: string, etag: string | undefined): Promise<Download> => {
    // The entry's controller ends the download on forget() and stop() as well; after a timeout it is replaced.
    const timeout = setTimeout(() => entry.abort.abort(new Error(`timed out after ${DOWNLOAD_TIMEOUT_MS / 1000}s`)), DOWNLOAD_TIMEOUT_MS)
    try {
      const headers = new Headers({ accept: 'application/json' })
      if (etag && !etag.startsWith(LOCAL_ETAG_PREFIX)) headers.set('if-none-match', etag)
      const request = new Request(`https://aggregator.invalid${path}`, { headers, signal: entry.abort.signal })
      const response = await deps.proxy(request, entry.api, AGGREGATOR_USER)
      if (response.status === 304 && etag) {
        await response.body?.cancel().catch(() => {})
        return { kind: 'unchanged' }
      }
      // Upstream takes a 404 as "this server publishes no document".
      if (response.status === 404) {
        await response.body?.cancel().catch(() => {})
        return { kind: 'absent' }
      }
      if (response.status !== 200) {
        await response.body?.cancel().catch(() => {})
        throw new Error(`${path} answered ${response.status}`)
      }
      const text = await readBounded(response, MAX_OPENAPI_BYTES)
      if (text === undefined) throw new Error(`${path} is larger than ${MAX_OPENAPI_BYTES} bytes`)
      const doc = await parseJsonInSlices(text, MAX_OPENAPI_DEPTH).catch((err: unknown) => {
        throw err instanceof JsonTooDeepError ? new Error(`${path} nests deeper than ${MAX_OPENAPI_DEPTH} levels`) : err
      })
      if (!isPlainObject(doc)) throw new Error(`${path} is not a JSON object`)
      const given = response.headers.get('etag')
      return { kind: 'document', doc, etag: given || `${LOCAL_ETAG_PREFIX}${await sha256Hex(text)}"` }
    } finally {
      clearTimeout(timeout)
      if (entry.abort.signal.aborted && tracked.get(entry.api.name) === entry) entry.abort = new AbortController()
    }
  }

  const syncV2 = async (entry: Tracked): Promise<void> => {
    const got = await download(entry, '/openapi/v2', entry.v2?.etag)
    // Absent or unchanged: the last good document stays, as upstream's cached LastSuccess.
    if (got.kind === 'document' && got.etag !== entry.v2?.etag) entry.v2 = { doc: got.doc, etag: got.etag }
  }

  const syncV3 = async (entry: Tracked): Promise<void> => {
    const key = `apis/${entry.api.group}/${entry.api.version}`
    const index = await download(entry, '/openapi/v3', undefined)
    if (index.kind !== 'document') {
      // A server without /openapi/v3: as upstream, its v2 document converted stands for its group/version.
      const v2 = entry.v2
      if (!v2) delete entry.v3
      else if (entry.v3?.etag !== v2.etag) entry.v3 = { key, doc: await runInSlices(openApiV2ToV3InSteps(v2.doc)), etag: v2.etag, hash: (await sha256Hex(v2.etag)).slice(0, 16).toUpperCase() }
      return
    }
    const paths = isPlainObject(index.doc['paths']) ? index.doc['paths'] : {}
    const item = paths[key]
    const relative = isPlainObject(item) && typeof item['serverRelativeURL'] === 'string' ? item['serverRelativeURL'] : undefined
    // Only the APIService's own group/version is taken: an extension server cannot stand in for another's document.
    const url = relative === undefined ? undefined : new URL(relative, 'https://aggregator.invalid')
    if (!url || url.origin !== 'https://aggregator.invalid' || url.pathname !== `/openapi/v3/${key}`) {
      delete entry.v3
      return
    }
    // The hash goes into this server's own index URL as it is: anything but a plain token is replaced by one of ours.
    const given = url.searchParams.get('hash') ?? ''
    const hash = /^[0-9A-Za-z_-]{1,128}$/.test(given) ? given : ''
    if (hash && entry.v3?.hash === hash) return
    const got = await download(entry, url.pathname + url.search, entry.v3?.etag)
    if (got.kind === 'absent') delete entry.v3
    else if (got.kind === 'document') entry.v3 = { key, doc: got.doc, etag: got.etag, hash: hash || (await sha256Hex(got.etag)).slice(0, 16).toUpperCase() }
  }

  const schedule = (entry: Tracked, ms: number) => {
    if (entry.timer) clearTimeout(entry.timer)
    entry.timer = setTimeout(() => void sync(entry), ms)
    ;(entry.timer as { unref?: () => void }).unref?.()
  }

  const sync = async (entry: Tracked): Promise<void> => {
    if (entry.running || tracked.get(entry.api.name) !== entry) return
    entry.running = true
    const failed: string[] = []
    for (const step of [syncV2, syncV3]) {
      try {
        await step(entry)
      } catch (err) {
        failed.push(err instanceof Error ? err.message : String(err))
      }
    }
    entry.running = false
    if (tracked.get(entry.api.name) !== entry) return
    if (failed.length === 0) {
      entry.failures = 0
      schedule(entry, deps.intervalMs)
      return
    }
    entry.failures++
    deps.logger.warn({ apiService: entry.api.name, err: failed.join('; ') }, 'cannot download the OpenAPI document of an APIService')
    schedule(entry, Math.min(deps.intervalMs * 2 ** (entry.failures - 1), MAX_BACKOFF_MS))
  }

  const forget = (name: string) => {
    const entry = tracked.get(name)
    if (!entry) return
    tracked.delete(name)
    if (entry.timer) clearTimeout(entry.timer)
    entry.abort.abort(new Error('the APIService is no longer followed'))
  }

  return {
    track(api) {
      const entry = tracked.get(api.name)
      if (!entry) {
        const fresh: Tracked = { api, failures: 0, running: false, abort: new AbortController() }
        tracked.set(api.name, fresh)
        schedule(fresh, FIRST_DOWNLOAD_DELAY_MS)
        return
      }
      entry.api = api
      // As upstream: a failing APIService that changed (it became Available) is tried again in a second.
      if (entry.failures > 0) {
        entry.failures = 0
        schedule(entry, FIRST_DOWNLOAD_DELAY_MS)
      }
    },
    forget,
    v2() {
      const groupPriority = new Map<string, number>()
      for (const { api } of tracked.values()) groupPriority.set(api.group, Math.max(groupPriority.get(api.group) ?? -Infinity, api.groupPriorityMinimum))
      return [...tracked.values()]
        .filter((e) => e.v2)
        .sort((a, b) => groupPriority.get(b.api.group)! - groupPriority.get(a.api.group)! || (a.api.name < b.api.name ? -1 : a.api.name > b.api.name ? 1 : 0))
        .map((e) => ({ name: e.api.name, doc: e.v2!.doc, etag: e.v2!.etag }))
    },
    v3() {
      const byKey = new Map<string, AggregatedV3Spec>()
      for (const { v3 } of tracked.values()) if (v3) byKey.set(v3.key, { key: v3.key, doc: v3.doc, hash: v3.hash })
      return byKey
    },
    stop() {
      for (const name of [...tracked.keys()]) forget(name)
    },
  }
}
