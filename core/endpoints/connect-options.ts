/**
 * The options object of a CONNECT request (`pods/exec`, `pods/attach`,
 * `pods/portforward`, and `proxy` on pods, nodes and services), read from
 * the query as upstream's connect handler decodes it into the connecter's
 * options type (`getRequestOptions` in endpoints/handlers/rest.go): it is
 * the object admission sees, in v1 with its kind set, as a webhook receives
 * it. A proxy's path is the rest of the URL after the subresource.
 */
import type { RequestInfo } from '../machinery/request-info.js'
import { badRequest } from '../machinery/status-error.js'
import type { KubeObject } from '../machinery/object.js'

/** The options kind of each CONNECT subresource, by `resource/subresource` (upstream's NewConnectOptions). */
const CONNECT_KINDS: Readonly<Record<string, string>> = {
  'pods/exec': 'PodExecOptions',
  'pods/attach': 'PodAttachOptions',
  'pods/portforward': 'PodPortForwardOptions',
  'pods/proxy': 'PodProxyOptions',
  'nodes/proxy': 'NodeProxyOptions',
  'services/proxy': 'ServiceProxyOptions',
}

/** Whether `resource/subresource` of the core group is answered by a CONNECT (pods/log is a GET upstream). */
export function isConnectSubresource(resource: string, subresource: string): boolean {
  return `${resource}/${subresource}` in CONNECT_KINDS
}

/** A query flag as upstream's query conversion reads it: absent is false, `0` and `false` (any case) are false, anything else true. */
function flag(params: URLSearchParams, name: string): boolean {
  const value = params.get(name)
  if (value === null) return false
  return !(value === '0' || value.toLowerCase() === 'false')
}

/** `ports`, repeated or comma-separated, each a 16-bit unsigned number (upstream's Convert_Slice_string_To_Slice_int32). */
function ports(params: URLSearchParams): number[] {
  const out: number[] = []
  for (const value of params.getAll('ports'))
    for (const part of value.split(',')) {
      const port = /^\d+$/.test(part) ? Number(part) : NaN
      if (!(port >= 0 && port <= 65535))
        throw badRequest(`cannot convert to []int32: strconv.ParseUint: parsing ${JSON.stringify(part)}: ${/^\d+$/.test(part) ? 'value out of range' : 'invalid syntax'}`)
      out.push(port)
    }
  return out
}

/** The proxied path: the URL's parts after `<resource>/<name>/proxy`, with a leading slash, and the trailing slash the client wrote. */
function proxyPath(info: RequestInfo): string {
  let path = info.parts.slice(3).join('/')
  if (path && !path.startsWith('/')) path = `/${path}`
  if (info.path.endsWith('/') && !path.endsWith('/')) path += '/'
  return path
}

/**
 * The options object of a CONNECT to `info`'s subresource, with empty
 * fields left out as upstream's JSON leaves them (an exec's `command` is
 * always written). Throws 400 for a query upstream cannot decode.
 */
export function connectOptions(info: RequestInfo, params: URLSearchParams): KubeObject {
  const kind = CONNECT_KINDS[`${info.resource}/${info.subresource}`]
  if (!kind) throw badRequest(`${info.resource}/${info.subresource} is not a connect subresource`)
  const options: Record<string, unknown> = { kind, apiVersion: 'v1' }
  if (info.subresource === 'exec' || info.subresource === 'attach') {
    for (const name of ['stdin', 'stdout', 'stderr', 'tty']) if (flag(params, name)) options[name] = true
    const container = params.get('container')
    if (container) options['container'] = container
    if (info.subresource === 'exec') {
      const command = params.getAll('command')
      options['command'] = command.length ? command : null
    }
  } else if (info.subresource === 'portforward') {
    const list = ports(params)
    if (list.length) options['ports'] = list
  } else {
    const path = proxyPath(info)
    if (path) options['path'] = path
  }
  // An options object has no metadata; admission reads names from the request, not from it.
  return options as unknown as KubeObject
}
