/**
 * `pods/<name>/exec`, `pods/<name>/attach` and `pods/<name>/portforward`
 * (upstream's ExecLocation, AttachLocation, PortForwardLocation): the
 * request's options become the node agent's query
 * (`/exec|attach/<ns>/<pod>/<container>?command=..&input=1..`,
 * `/portForward/<ns>/<pod>?port=..`) and the upgrade passes through to the
 * agent as it is: kubectl's WebSocket protocols (`v5.channel.k8s.io` and
 * older, port-forward over WebSocket) and SPDY/3.1 alike, the agent
 * choosing the protocol as a real one does. A request that is no upgrade
 * is refused as upstream refuses it.
 */
import { badRequest } from '../machinery/status-error.js'
import type { PassUpgrade } from '../proxy/upgrade.js'
import { isUpgradeRequest, upgradeHeaders } from '../proxy/upgrade.js'
import { stripIdentity, identityHeaderNames } from '../aggregator/identity-headers.js'
import { isPlainObject, type KubeObject } from '../machinery/object.js'
import { agentConnection, type NodeAgentDeps } from './connection.js'
import { chooseContainer } from './logs.js'

export type StreamSubresource = 'exec' | 'attach' | 'portforward'

function flag(params: URLSearchParams, name: string): boolean {
  const value = params.get(name)
  if (value === null || value === '') return false
  if (['true', '1', 't', 'T', 'TRUE', 'True'].includes(value)) return true
  if (['false', '0', 'f', 'F', 'FALSE', 'False'].includes(value)) return false
  throw badRequest(`strconv.ParseBool: parsing ${JSON.stringify(value)}: invalid syntax`)
}

/** The agent's query for exec and attach: input/output/error/tty as "1", each command word, sorted by key as Go encodes it. */
export function agentStreamQuery(sub: 'exec' | 'attach', params: URLSearchParams): string {
  const out = new URLSearchParams()
  if (sub === 'exec') for (const word of params.getAll('command')) out.append('command', word)
  if (flag(params, 'stderr')) out.append('error', '1')
  if (flag(params, 'stdin')) out.append('input', '1')
  if (flag(params, 'stdout')) out.append('output', '1')
  if (flag(params, 'tty')) out.append('tty', '1')
  return out.toString()
}

/** The agent's query for port-forward: one `port` per requested port, each checked. */
export function agentPortQuery(params: URLSearchParams): string {
  const out = new URLSearchParams()
  for (const value of params.getAll('ports').flatMap((v) => v.split(','))) {
    const port = Number(value.trim())
    if (!/^\d+$/.test(value.trim()) || port < 1 || port > 65535) throw badRequest(`invalid port ${JSON.stringify(value)}`)
    out.append('port', String(port))
  }
  return out.toString()
}

const V5 = 'v5.channel.k8s.io'

/**
 * A WebSocket exec or attach that offers `v5.channel.k8s.io` is offered to
 * the agent with that protocol alone: v5 carries the end of stdin, which the
 * older channel protocols cannot. An agent that speaks v5 answers it; one
 * that does not (a kubelet that speaks SPDY) refuses the handshake, and
 * kubectl falls back to SPDY/3.1, which passes through too; either way
 * `exec -i < file` ends when the file does, as upstream's translation to SPDY
 * makes it end. A client offering only older protocols is passed as it is.
 */
export function narrowToV5(sub: StreamSubresource, headers: Headers): Headers {
  if (sub === 'portforward' || (headers.get('upgrade') ?? '').toLowerCase() !== 'websocket') return headers
  const offered = (headers.get('sec-websocket-protocol') ?? '').split(',').map((p) => p.trim())
  if (offered.includes(V5)) headers.set('sec-websocket-protocol', V5)
  return headers
}

/** Checks the request and hands its connection to the pod's node agent. */
export async function podStream(
  deps: NodeAgentDeps,
  sub: StreamSubresource,
  pod: KubeObject,
  request: Request,
  passUpgrade: PassUpgrade | undefined,
): Promise<Response> {
  const name = pod.metadata.name ?? ''
  const namespace = pod.metadata.namespace ?? ''
  const params = new URL(request.url).searchParams
  const container = sub === 'portforward' ? '' : chooseContainer(pod, params.get('container') ?? undefined)
  const spec = isPlainObject(pod['spec']) ? pod['spec'] : {}
  const nodeName = typeof spec['nodeName'] === 'string' ? spec['nodeName'] : ''
  if (!nodeName) throw badRequest(`pod ${name} does not have a host assigned`)
  const query = sub === 'portforward' ? agentPortQuery(params) : agentStreamQuery(sub, params)
  const connection = await agentConnection(deps, nodeName)
  if (!isUpgradeRequest(request)) throw badRequest('Upgrade request required')
  if (!passUpgrade) throw badRequest('this server cannot pass connection upgrades through on this runtime')
  const path =
    sub === 'portforward'
      ? `/portForward/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`
      : `/${sub}/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}/${encodeURIComponent(container)}`
  const headers = narrowToV5(sub, upgradeHeaders(request.headers))
  stripIdentity(headers, undefined, identityHeaderNames(undefined))
  const agentPath = query ? `${path}?${query}` : path
  const simulated = deps.transport.simulatedStream?.(connection.target, agentPath)
  passUpgrade({ target: connection.target, request: { method: request.method, path: agentPath, headers }, ...(simulated ? { simulated } : {}) })
  // The runtime answers the client from the agent; this answer is not sent.
  return new Response(null, { status: 200 })
}
