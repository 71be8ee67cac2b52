/**
 * `pods/<name>/log`: the pod's container log, read from its node's agent at
 * `/containerLogs/<namespace>/<pod>/<container>` and streamed back as it
 * arrives (upstream's LogREST and LogLocation). The query is checked as
 * PodLogOptions first; a pod not yet on a node has an empty log.
 */
import { ByteThrottle, throttledBody } from '../proxy/byte-throttle.js'
import { badRequest } from '../machinery/status-error.js'
import { joinedBytes } from '../machinery/joined-bytes.js'
import { fieldPath, forbiddenField, invalid, invalidError, type FieldError } from '../machinery/field.js'
import { isPlainObject, type KubeObject } from '../machinery/object.js'
import { agentConnection, type NodeAgentDeps } from './connection.js'
import { asPlainStatus, genericServerResponse } from './errors.js'

export interface PodLogOptions {
  container?: string
  follow: boolean
  previous: boolean
  timestamps: boolean
  insecureSkipTLSVerifyBackend: boolean
  sinceSeconds?: number
  /** As the client sent it, RFC 3339. */
  sinceTime?: Date
  tailLines?: number
  limitBytes?: number
}

/** How much of an agent's error answer is kept in the Status (upstream reads a bounded prefix too). */
const MAX_ERROR_BODY = 50_000

function boolParam(params: URLSearchParams, name: string): boolean {
  const value = params.get(name)
  if (value === null || value === '') return false
  if (value === 'true' || value === '1' || value === 'True' || value === 'TRUE' || value === 't' || value === 'T') return true
  if (value === 'false' || value === '0' || value === 'False' || value === 'FALSE' || value === 'f' || value === 'F') return false
  throw badRequest(`strconv.ParseBool: parsing ${JSON.stringify(value)}: invalid syntax`)
}

function intParam(params: URLSearchParams, name: string): number | undefined {
  const value = params.get(name)
  if (value === null || value === '') return undefined
  if (!/^[+-]?\d+$/.test(value) || !Number.isSafeInteger(Number(value))) throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(value)}: invalid syntax`)
  return Number(value)
}

/** The query as PodLogOptions; a value that does not parse is a 400, as upstream's parameter codec answers. */
export function parsePodLogOptions(params: URLSearchParams): PodLogOptions {
  const options: PodLogOptions = {
    follow: boolParam(params, 'follow'),
    previous: boolParam(params, 'previous'),
    timestamps: boolParam(params, 'timestamps'),
    insecureSkipTLSVerifyBackend: boolParam(params, 'insecureSkipTLSVerifyBackend'),
  }
  const container = params.get('container')
  if (container) options.container = container
  for (const name of ['sinceSeconds', 'tailLines', 'limitBytes'] as const) {
    const value = intParam(params, name)
    if (value !== undefined) options[name] = value
  }
  const since = params.get('sinceTime')
  if (since) {
    const time = new Date(since)
    if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(since) || Number.isNaN(time.getTime()))
      throw badRequest(`parsing time ${JSON.stringify(since)} as "2006-01-02T15:04:05Z07:00": cannot parse ${JSON.stringify(since)} as RFC 3339`)
    options.sinceTime = time
  }
  return options
}

/** Upstream's ValidatePodLogOptions. */
export function validatePodLogOptions(options: PodLogOptions): FieldError[] {
  const errors: FieldError[] = []
  if (options.tailLines !== undefined && options.tailLines < 0)
    errors.push(invalid(fieldPath('tailLines'), options.tailLines, 'must be greater than or equal to 0'))
  if (options.limitBytes !== undefined && options.limitBytes < 1)
    errors.push(invalid(fieldPath('limitBytes'), options.limitBytes, 'must be greater than 0'))
  if (options.sinceSeconds !== undefined && options.sinceTime !== undefined)
    errors.push(forbiddenField(fieldPath(''), 'at most one of `sinceTime` or `sinceSeconds` may be specified'))
  else if (options.sinceSeconds !== undefined && options.sinceSeconds < 1)
    errors.push(invalid(fieldPath('sinceSeconds'), options.sinceSeconds, 'must be greater than 0'))
  return errors
}

function containerNames(pod: KubeObject, field: string): string[] {
  const spec = isPlainObject(pod['spec']) ? pod['spec'] : {}
  const list = Array.isArray(spec[field]) ? spec[field] : []
  return list.filter(isPlainObject).map((c) => String(c['name'] ?? ''))
}

/** The container a request names, or the pod's only one; upstream's validateContainer and its messages. */
export function chooseContainer(pod: KubeObject, container: string | undefined): string {
  const name = pod.metadata.name ?? ''
  const regular = containerNames(pod, 'containers')
  const init = containerNames(pod, 'initContainers')
  const ephemeral = containerNames(pod, 'ephemeralContainers')
  if (container) {
    if (![...regular, ...init, ...ephemeral].includes(container)) throw badRequest(`container ${container} is not valid for pod ${name}`)
    return container
  }
  if (regular.length === 1) return regular[0]!
  if (regular.length === 0) throw badRequest(`a container name must be specified for pod ${name}`)
  // Go prints a []string with %s as [a b].
  let message = `a container name must be specified for pod ${name}, choose one of: [${regular.join(' ')}]`
  if (init.length) message += ` or one of the init containers: [${init.join(' ')}]`
  if (ephemeral.length) message += ` or one of the ephemeral containers: [${ephemeral.join(' ')}]`
  throw badRequest(message)
}

/** Go's time.RFC3339 of a Date, in UTC. */
function rfc3339(time: Date): string {
  return time.toISOString().replace(/\.\d{3}Z$/, 'Z')
}

/** The agent's query, in the order and spelling upstream's LogLocation writes (url.Values sorts by key). */
export function agentLogQuery(options: PodLogOptions): string {
  const params = new URLSearchParams()
  const set: [string, string][] = []
  if (options.follow) set.push(['follow', 'true'])
  if (options.limitBytes !== undefined) set.push(['limitBytes', String(options.limitBytes)])
  if (options.previous) set.push(['previous', 'true'])
  if (options.sinceSeconds !== undefined) set.push(['sinceSeconds', String(options.sinceSeconds)])
  if (options.sinceTime !== undefined) set.push(['sinceTime', rfc3339(options.sinceTime)])
  if (options.tailLines !== undefined) set.push(['tailLines', String(options.tailLines)])
  if (options.timestamps) set.push(['timestamps', 'true'])
  for (const [k, v] of set.sort(([a], [b]) => (a < b ? -1 : 1))) params.append(k, v)
  return params.toString()
}

async function readPrefix(body: ReadableStream<Uint8Array> | null, limit: number): Promise<string> {
  if (!body) return ''
  const reader = body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  try {
    while (size < limit) {
      const { done, value } = await reader.read()
      if (done) break
      chunks.push(value)
      size += value.byteLength
    }
  } finally {
    await reader.cancel().catch(() => {})
  }
  return new TextDecoder().decode(joinedBytes(chunks, size).subarray(0, limit))
}

/** The statuses Go's client follows when their answer names a Location (and asks its CheckRedirect first). */
const FOLLOWED_REDIRECTS: ReadonlySet<number> = new Set([301, 302, 303, 307, 308])

/** Answers `GET pods/<name>/log` for `pod` (already read). */
export async function podLog(deps: NodeAgentDeps, pod: KubeObject, params: URLSearchParams, signal?: AbortSignal): Promise<Response> {
  const name = pod.metadata.name ?? ''
  const namespace = pod.metadata.namespace ?? ''
  const options = parsePodLogOptions(params)
  const errors = validatePodLogOptions(options)
  if (errors.length) throw invalidError('', 'PodLogOptions', name, errors)
  const container = chooseContainer(pod, options.container)
  const spec = isPlainObject(pod['spec']) ? pod['spec'] : {}
  const nodeName = typeof spec['nodeName'] === 'string' ? spec['nodeName'] : ''
  // Not scheduled yet: nothing to read, an empty answer as upstream gives.
  if (!nodeName) return new Response(null, { status: 200, headers: { 'content-type': 'text/plain' } })
  const connection = await agentConnection(deps, nodeName, options.insecureSkipTLSVerifyBackend)
  const query = agentLogQuery(options)
  const path = `/containerLogs/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}/${encodeURIComponent(container)}${query ? `?${query}` : ''}`
  let response: Response
  try {
    response = await deps.transport.roundTrip(connection.target, {
      method: 'GET',
      path,
      headers: new Headers(),
      body: null,
      ...(signal ? { signal } : {}),
    })
  } catch (err) {
    // Go's client error names the method and URL before the reason.
    throw asPlainStatus(new Error(`Get ${JSON.stringify(connection.target.origin + path)}: ${err instanceof Error ? err.message : String(err)}`))
  }
  // Upstream's log streamer refuses to follow a redirect (PreventRedirects): Go's client then fails the request.
  if (FOLLOWED_REDIRECTS.has(response.status) && response.headers.get('location')) {
    await response.body?.cancel().catch(() => {})
    throw asPlainStatus(new Error(`Get ${JSON.stringify(connection.target.origin + path)}: redirects forbidden`))
  }
  if (response.status < 200 || response.status > 299) {
    const text = await readPrefix(response.body, MAX_ERROR_BODY)
    throw genericServerResponse(response.status, text, '', 'pods/log', name)
  }
  // The agent's bytes, as they come: a follow streams until either side ends.
  // A log is a long-running request, so --max-connection-bytes-per-sec paces it.
  const rate = deps.options.maxBytesPerSec ?? 0
  const body = rate > 0 && response.body ? throttledBody(response.body, new ByteThrottle(rate)) : response.body
  return new Response(body, { status: 200, headers: { 'content-type': 'text/plain', 'cache-control': 'no-cache, private' } })
}
