/**
 * The simulated nodes' agent: what the API server asks a kubelet for, about
 * a pod on a simulated node, answered in process. The server reaches it as
 * it reaches a real agent (the node's preferred address and agent port, the
 * node-agent path of `pods/log`, `exec` and `attach`); the transport hands
 * calls for a simulated node's address to the simulation instead of the
 * network and passes every other call on. A container's log is one line
 * saying what it is; an exec prints one line and succeeds.
 */
import { badRequest } from '../machinery/status-error.js'
import type { ForwardedRequest, ProxyTarget, ProxyTransport, SimulatedStream } from '../proxy/transport.js'
import { nodeAddress, nodeNames, type SimulatedNodesOptions } from './nodes.js'

/** The agent settings a server with simulated nodes uses when it was given none: the addresses upstream prefers, a short dial. */
export const SIMULATED_NODE_AGENT = { preferredAddressTypes: ['Hostname', 'InternalDNS', 'InternalIP', 'ExternalDNS', 'ExternalIP'], timeoutMs: 5000 }

/** The line a simulated container's log holds. */
export function simulatedLogLine(namespace: string, pod: string, container: string): string {
  return `simulated container ${container} of pod ${namespace}/${pod}: no process runs here\n`
}

/** `transport`, with the calls to a simulated node's agent answered by the simulation. */
export function withSimulatedAgents(transport: ProxyTransport, options: SimulatedNodesOptions, now: () => Date): ProxyTransport {
  const hosts = new Set(nodeNames(options).flatMap((name, index) => [name, nodeAddress(index)]))
  const simulated = (target: ProxyTarget): boolean => {
    const { hostname } = new URL(target.origin)
    return hosts.has(hostname)
  }
  return {
    roundTrip: (target, request) => (simulated(target) ? Promise.resolve(answer(request, now)) : transport.roundTrip(target, request)),
    simulatedStream: (target, path) => (simulated(target) ? execStream(path) : transport.simulatedStream?.(target, path)),
    answersInProcess: (target) => simulated(target) || (transport.answersInProcess?.(target) ?? false),
  }
}

/**
 * An exec or attach on a simulated container: one line naming what ran,
 * and success. Port-forwarding has no simulation: refused at once, rather
 * than dialled at an address nothing answers.
 */
function execStream(path: string): SimulatedStream {
  const url = new URL(path, 'https://agent')
  const [sub, namespace, pod, container] = url.pathname.split('/').slice(1).map(decodeURIComponent)
  if ((sub !== 'exec' && sub !== 'attach') || !container) throw badRequest(`${sub === 'portForward' ? 'port-forwarding' : sub} is not simulated: pod ${namespace}/${pod} runs on a simulated node`)
  const command = url.searchParams.getAll('command').join(' ')
  const what = sub === 'exec' ? `ran "${command}"` : 'was attached to'
  return { stdout: `simulated container ${container} of pod ${namespace}/${pod} ${what}: no process runs here\n`, exitCode: 0 }
}

function answer(request: ForwardedRequest, now: () => Date): Response {
  const url = new URL(request.path, 'https://agent')
  const parts = url.pathname.split('/').slice(1).map(decodeURIComponent)
  if (request.method !== 'GET' || parts[0] !== 'containerLogs' || parts.length !== 4) {
    return new Response(`the simulated node agent does not serve ${request.method} ${url.pathname}\n`, { status: 404, headers: { 'content-type': 'text/plain' } })
  }
  const [, namespace, pod, container] = parts as [string, string, string, string]
  const query = url.searchParams
  const tail = query.get('tailLines')
  let text = tail === '0' ? '' : simulatedLogLine(namespace, pod, container)
  if (text && query.get('timestamps') === 'true') text = `${now().toISOString().replace('Z', '000000Z')} ${text}`
  const limit = query.get('limitBytes')
  if (limit !== null) text = new TextDecoder().decode(new TextEncoder().encode(text).subarray(0, Number(limit)))
  return new Response(text, { status: 200, headers: { 'content-type': 'text/plain' } })
}
