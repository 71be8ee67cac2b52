/**
 * A typed client of the server's own API (upstream's loopback client-go):
 * every call is an HTTP request through the whole filter chain as the
 * client's identity, so authorization, admission, audit and priority and
 * fairness apply to a controller's writes as to any client's. A failure
 * answers as the StatusError the server sent.
 */
import type { KubeList, KubeObject, UserInfo } from '../machinery/object.js'
import { StatusError, type StatusReason } from '../machinery/status-error.js'
import { inProcessRequest } from '../machinery/in-process-request.js'

/** Answers one request as `identity`, in process (the server's own fetch, past authentication). */
export type ClientTransport = (request: Request, identity: UserInfo) => Promise<Response>

/** What addresses a resource's URL: a catalogue entry is one. */
export interface ResourceRef {
  readonly group: string
  readonly version: string
  readonly resource: string
  readonly namespaced: boolean
}

export interface ListOptions {
  labelSelector?: string
  fieldSelector?: string
  resourceVersion?: string
  limit?: number
  continue?: string
}

export interface WatchOptions {
  resourceVersion?: string
  labelSelector?: string
  fieldSelector?: string
  allowWatchBookmarks?: boolean
  timeoutSeconds?: number
}

export interface WriteOptions {
  subresource?: string
  fieldManager?: string
  dryRun?: boolean
}

export type PatchType = 'json' | 'merge' | 'strategic' | 'apply'

const PATCH_CONTENT_TYPES: Record<PatchType, string> = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
}

export interface DeleteOptions {
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground'
  gracePeriodSeconds?: number
  preconditions?: { uid?: string; resourceVersion?: string }
  dryRun?: boolean
}

/** One resource of a discovery document (subresources are named `<resource>/<subresource>`). */
export interface APIResource {
  name: string
  kind: string
  namespaced: boolean
  group?: string
  version?: string
  verbs?: string[]
}

export interface APIResourceList {
  groupVersion: string
  resources: APIResource[]
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK'

export interface ClientWatch extends AsyncIterable<{ type: WatchEventType; object: KubeObject }> {
  stop(): void
}

const ORIGIN = 'http://in-process'

export class ObjectClient {
  constructor(
    private readonly transport: ClientTransport,
    readonly identity: UserInfo,
    /** What the requests say they come from (the request log and audit show it), as upstream's clients name themselves. */
    readonly userAgent = 'kube-apiserver',
  ) {}

  /** The same client acting as another identity (each controller writes as its own service account), under its own user agent. */
  as(identity: UserInfo, userAgent = this.userAgent): ObjectClient {
    return new ObjectClient(this.transport, identity, userAgent)
  }

  async get(resource: ResourceRef, namespace: string, name: string, subresource?: string): Promise<KubeObject> {
    return (await this.call('GET', pathOf(resource, namespace, name, subresource))) as KubeObject
  }

  async list(resource: ResourceRef, namespace = '', options: ListOptions = {}): Promise<KubeList> {
    return (await this.call('GET', pathOf(resource, namespace), queryOf(options))) as KubeList
  }

  async create(resource: ResourceRef, namespace: string, object: KubeObject, options: WriteOptions = {}): Promise<KubeObject> {
    const path = pathOf(resource, namespace, options.subresource ? object.metadata.name : undefined, options.subresource)
    return (await this.call('POST', path, writeQuery(options), object)) as KubeObject
  }

  async update(resource: ResourceRef, namespace: string, object: KubeObject, options: WriteOptions = {}): Promise<KubeObject> {
    const path = pathOf(resource, namespace, object.metadata.name ?? '', options.subresource)
    return (await this.call('PUT', path, writeQuery(options), object)) as KubeObject
  }

  /** The status subresource's update: what a controller reports. */
  updateStatus(resource: ResourceRef, namespace: string, object: KubeObject): Promise<KubeObject> {
    return this.update(resource, namespace, object, { subresource: 'status' })
  }

  async patch(
    resource: ResourceRef,
    namespace: string,
    name: string,
    type: PatchType,
    patch: unknown,
    options: WriteOptions & { force?: boolean } = {},
  ): Promise<KubeObject> {
    const query = writeQuery(options)
    if (options.force) query.set('force', 'true')
    const body = typeof patch === 'string' ? patch : JSON.stringify(patch)
    return (await this.call('PATCH', pathOf(resource, namespace, name, options.subresource), query, body, PATCH_CONTENT_TYPES[type])) as KubeObject
  }

  /** The object's `scale` subresource: an autoscaling/v1 Scale (spec.replicas, status.replicas, status.selector). */
  getScale(resource: ResourceRef, namespace: string, name: string): Promise<KubeObject> {
    return this.get(resource, namespace, name, 'scale')
  }

  /** Writes a Scale back through the `scale` subresource (what an autoscaler or `kubectl scale` changes). */
  updateScale(resource: ResourceRef, namespace: string, scale: KubeObject): Promise<KubeObject> {
    return this.update(resource, namespace, scale, { subresource: 'scale' })
  }

  /** A group version's APIResourceList (`/api/v1`, `/apis/<group>/<version>`): discovery, as a REST mapper reads it. */
  async resources(group: string, version: string): Promise<APIResourceList> {
    return (await this.call('GET', group ? `/apis/${group}/${version}` : `/api/${version}`)) as APIResourceList
  }

  /** Answers the object as deletion left it (with a deletionTimestamp when finalizers hold it), or a Status. */
  async delete(resource: ResourceRef, namespace: string, name: string, options: DeleteOptions = {}): Promise<KubeObject> {
    const { dryRun, ...body } = options
    const query = new URLSearchParams(dryRun ? { dryRun: 'All' } : {})
    return (await this.call('DELETE', pathOf(resource, namespace, name), query, { kind: 'DeleteOptions', apiVersion: 'v1', ...body })) as KubeObject
  }

  /**
   * A watch of the resource's objects. An ERROR event (a resourceVersion too
   * old, say) ends the iteration with its StatusError; `stop()` ends it quietly.
   */
  async watch(resource: ResourceRef, namespace = '', options: WatchOptions = {}): Promise<ClientWatch> {
    const query = queryOf(options)
    query.set('watch', 'true')
    const abort = new AbortController()
    const response = await this.send('GET', pathOf(resource, namespace), query, undefined, undefined, abort.signal)
    if (!response.ok) throw await statusErrorOf(response)
    const body = response.body
    return {
      stop: () => abort.abort(),
      async *[Symbol.asyncIterator]() {
        if (!body) return
        const reader = body.pipeThrough(new TextDecoderStream()).getReader()
        let pending = ''
        try {
          for (;;) {
            const { done, value } = await reader.read().catch((err: unknown) => {
              if (abort.signal.aborted) return { done: true as const, value: undefined }
              throw err
            })
            if (done) return
            pending += value
            let newline: number
            while ((newline = pending.indexOf('\n')) >= 0) {
              const line = pending.slice(0, newline).trim()
              pending = pending.slice(newline + 1)
              if (!line) continue
              const event = JSON.parse(line) as { type: WatchEventType | 'ERROR'; object: KubeObject }
              if (event.type === 'ERROR') throw statusErrorFromBody(event.object as unknown as Partial<StatusBody>, 500)
              yield event as { type: WatchEventType; object: KubeObject }
            }
          }
        } finally {
          abort.abort()
          reader.releaseLock()
        }
      },
    }
  }

  private async call(method: string, path: string, query?: URLSearchParams, body?: unknown, contentType?: string): Promise<unknown> {
    const response = await this.send(method, path, query, body, contentType)
    if (!response.ok) throw await statusErrorOf(response)
    return response.json()
  }

  private send(method: string, path: string, query?: URLSearchParams, body?: unknown, contentType?: string, signal?: AbortSignal): Promise<Response> {
    const search = query?.size ? `?${query}` : ''
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': this.userAgent }
    let payload: string | undefined
    if (body !== undefined) {
      payload = typeof body === 'string' ? body : JSON.stringify(body)
      headers['content-type'] = contentType ?? 'application/json'
    }
    const url = `${ORIGIN}${path}${search}`
    const init = { method, headers, ...(signal ? { signal } : {}) }
    return this.transport(payload === undefined ? new Request(url, init) : inProcessRequest(url, init, payload), this.identity)
  }
}

/** `/api/v1/namespaces/ns/pods/name/status`, `/apis/apps/v1/deployments` ... */
export function pathOf(resource: ResourceRef, namespace: string, name?: string, subresource?: string): string {
  const root = resource.group ? `/apis/${resource.group}/${resource.version}` : `/api/${resource.version}`
  const scope = resource.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : ''
  const named = name !== undefined ? `/${encodeURIComponent(name)}${subresource ? `/${subresource}` : ''}` : ''
  return `${root}${scope}/${resource.resource}${named}`
}

function queryOf(options: ListOptions | WatchOptions): URLSearchParams {
  const query = new URLSearchParams()
  for (const [key, value] of Object.entries(options)) if (value !== undefined) query.set(key, String(value))
  return query
}

function writeQuery(options: WriteOptions): URLSearchParams {
  const query = new URLSearchParams()
  if (options.fieldManager) query.set('fieldManager', options.fieldManager)
  if (options.dryRun) query.set('dryRun', 'All')
  return query
}

interface StatusBody {
  message: string
  reason: StatusReason
  code: number
  details: StatusError['details']
}

async function statusErrorOf(response: Response): Promise<StatusError> {
  const text = await response.text()
  let body: Partial<StatusBody> = {}
  try {
    body = JSON.parse(text) as Partial<StatusBody>
  } catch {
    body = { message: text }
  }
  return statusErrorFromBody(body, response.status)
}

function statusErrorFromBody(body: Partial<StatusBody>, fallbackCode: number): StatusError {
  return new StatusError(body.code ?? fallbackCode, (body.reason ?? '') as StatusReason, body.message ?? `the server answered ${fallbackCode}`, body.details ?? undefined)
}
