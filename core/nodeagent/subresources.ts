/**
 * The connect subresources that reach out of the server: `pods/log`,
 * `pods/exec`, `pods/attach`, `pods/portforward`, and `proxy` on pods,
 * services and nodes. Authorization already ran on the request's verb and
 * subresource (get on pods/log, create or get on pods/exec, ...), as upstream.
 */
import type { RequestInfo } from '../machinery/request-info.js'
import { queryOf } from '../http/query.js'
import { joinPreservingTrailingSlash } from '../machinery/clean-path.js'
import { resourceNotFound } from '../machinery/status-error.js'
import type { ResourceEntry } from '../resources/catalogue.js'
import type { PassUpgrade } from '../proxy/upgrade.js'
import type { NodeAgentDeps } from './connection.js'
import { podLog } from './logs.js'
import { forwardProxy, nodeProxyLocation, podProxyLocation, serviceProxyLocation } from './proxy.js'
import { podStream } from './streams.js'

export const NODE_AGENT_SUBRESOURCES = ['log', 'exec', 'attach', 'portforward', 'proxy'] as const

/** Whether `resource/subresource` is one answered here. */
export function isNodeAgentSubresource(resource: string, subresource: string): boolean {
  if (subresource === 'proxy') return ['pods', 'services', 'nodes'].includes(resource)
  return resource === 'pods' && (NODE_AGENT_SUBRESOURCES as readonly string[]).includes(subresource)
}

/** The request's path split after `/<resource>/<name>/proxy`: up to there, and what the client wrote after ('' when nothing). */
function splitAtProxy(url: URL, info: RequestInfo): { prefix: string; after: string } {
  const marker = `/${info.parts.slice(0, 3).join('/')}`
  const at = url.pathname.indexOf(marker)
  if (at < 0) return { prefix: url.pathname, after: '' }
  const end = at + marker.length
  return { prefix: url.pathname.slice(0, end), after: url.pathname.slice(end) }
}

export async function handleNodeAgentSubresource(
  request: Request,
  info: RequestInfo,
  entry: ResourceEntry,
  deps: NodeAgentDeps,
  passUpgrade: PassUpgrade | undefined,
  remoteAddress?: string,
): Promise<Response> {
  const url = new URL(request.url)
  if (info.subresource === 'proxy') {
    const { prefix, after } = splitAtProxy(url, info)
    // Nothing after `proxy`: a read is sent to `proxy/`, as upstream's proxy handler redirects it (relative links then resolve).
    if (after === '' && (request.method === 'GET' || request.method === 'HEAD')) {
      return new Response(null, { status: 301, headers: { location: `${url.pathname}/${url.search}` } })
    }
    // Joined to the backend's root and cleaned as upstream's location is.
    const path = joinPreservingTrailingSlash('/', after)
    const location =
      entry.resource === 'pods'
        ? await podProxyLocation(deps, info.namespace, info.name)
        : entry.resource === 'services'
          ? await serviceProxyLocation(deps, info.namespace, info.name)
          : await nodeProxyLocation(deps, info.name)
    return forwardProxy(deps, request, location, { path, proxyPrefix: prefix, passUpgrade, remoteAddress })
  }
  if (entry.resource !== 'pods') throw resourceNotFound()
  const pod = await deps.stored.get(entry, info.namespace, info.name)
  if (info.subresource === 'log') return podLog(deps, pod, queryOf(request), request.signal)
  return podStream(deps, info.subresource as 'exec' | 'attach' | 'portforward', pod, request, passUpgrade)
}
