/**
 * The proxy subresources (upstream's ProxyREST and ResourceLocation):
 * `pods/<name[:port]>/proxy/<path>` to the pod's IP, `services/<name[:port]>/proxy/<path>`
 * to a ready endpoint of the Service from its EndpointSlices (a port by name
 * or number), `nodes/<name[:port]>/proxy/<path>` to the node agent itself
 * (its TLS and client certificate) or, for another port, to that port on the
 * node. A name may carry a scheme (`https:name:port`). Every verb passes;
 * the caller's credentials and identity headers do not.
 */
import { badRequest, serviceUnavailable } from '../machinery/status-error.js'
import { stripIdentity, identityHeaderNames } from '../aggregator/identity-headers.js'
import { isPlainObject, type KubeObject } from '../machinery/object.js'
import type { ProxyTarget } from '../proxy/transport.js'
import { isUpgradeRequest, upgradeHeaders, type PassUpgrade } from '../proxy/upgrade.js'
import { appendForwardedFor, forwardedUri, proxiedAnswer } from '../proxy/proxied-answer.js'
import { agentConnection, agentTarget, joinHostPort, type NodeAgentDeps } from './connection.js'
import { asPlainStatus } from './errors.js'
import { isGlobalUnicast } from './addresses.js'

export interface SchemeNamePort {
  scheme: string
  name: string
  port: string
}

/** Upstream's SplitSchemeNamePort: `name`, `name:port` or `scheme:name:port`, scheme http or https. */
export function splitSchemeNamePort(id: string): SchemeNamePort | undefined {
  const parts = id.split(':')
  let scheme = ''
  let name = ''
  let port = ''
  if (parts.length === 1) name = parts[0]!
  else if (parts.length === 2) [name, port] = parts as [string, string]
  else if (parts.length === 3) [scheme, name, port] = parts as [string, string, string]
  else return undefined
  if (!name || !['', 'http', 'https'].includes(scheme)) return undefined
  return { scheme, name, port }
}

const at = (obj: unknown, ...keys: string[]): unknown =>
  keys.reduce<unknown>((v, k) => (isPlainObject(v) ? v[k] : undefined), obj)

async function read(deps: NodeAgentDeps, resource: string, namespace: string, name: string): Promise<KubeObject> {
  const entry = deps.catalogue.lookup(resource === 'endpointslices' ? 'discovery.k8s.io' : '', 'v1', resource)
  if (!entry) throw new Error(`${resource} are not served`)
  return deps.stored.get(entry, namespace, name)
}

/** Where a proxied call goes: origin and how the connection is secured. */
export interface ProxyLocation {
  target: ProxyTarget
}

/**
 * A port as Go's dialer takes one: digits up to 65535. Anything else (`80@127.0.0.1`)
 * put after the host would make the origin name another host; upstream's dial refuses it.
 */
function checkPort(port: string): void {
  // Go's LookupPort words the two refusals so; a name it would look up in the services database is refused here.
  if (!/^\d+$/.test(port)) throw serviceUnavailable(`error trying to reach service: dial tcp: lookup tcp/${port}: unknown port`)
  if (Number(port) > 65_535) throw serviceUnavailable(`error trying to reach service: dial tcp: address ${port}: invalid port`)
}

function plainTarget(scheme: string, host: string, port: string, timeoutMs: number): ProxyTarget {
  if (port) checkPort(port)
  return {
    origin: `${scheme || 'http'}://${port ? joinHostPort(host, port) : host.includes(':') ? `[${host}]` : host}`,
    // Upstream's proxy transport does not verify the certificates of pods and endpoints.
    ...(scheme === 'https' ? { insecureSkipTLSVerify: true } : {}),
    dialTimeoutMs: timeoutMs,
    egress: 'cluster',
  }
}

/** pods/proxy: the pod's IP (a global unicast one only) at the named port or its first declared one. */
export async function podProxyLocation(deps: NodeAgentDeps, namespace: string, id: string): Promise<ProxyLocation> {
  const parsed = splitSchemeNamePort(id)
  if (!parsed) throw badRequest(`invalid pod request ${JSON.stringify(id)}`)
  const pod = await read(deps, 'pods', namespace, parsed.name)
  let port = parsed.port
  if (!port) {
    const containers = (at(pod, 'spec', 'containers') as unknown[] | undefined) ?? []
    for (const c of containers) {
      const first = (at(c, 'ports') as unknown[] | undefined)?.[0]
      if (first !== undefined) {
        port = String(at(first, 'containerPort'))
        break
      }
    }
  }
  const podIPs = (at(pod, 'status', 'podIPs') as unknown[] | undefined) ?? []
  const ip = String(at(podIPs[0], 'ip') ?? at(pod, 'status', 'podIP') ?? '')
  if (!isGlobalUnicast(ip)) throw badRequest('address not allowed')
  return { target: plainTarget(parsed.scheme, ip, port, deps.options.timeoutMs) }
}

/** Whether an endpoint's address belongs to the pod its targetRef names in this namespace (upstream's isValidAddress). */
async function endpointOfPod(deps: NodeAgentDeps, namespace: string, endpoint: Record<string, unknown>, ip: string): Promise<boolean> {
  const ref = endpoint['targetRef']
  if (!isPlainObject(ref) || ref['kind'] !== 'Pod' || ref['namespace'] !== namespace || typeof ref['name'] !== 'string') return false
  const pod = await read(deps, 'pods', namespace, ref['name']).catch(() => undefined)
  const podIPs = ((at(pod, 'status', 'podIPs') as unknown[] | undefined) ?? []).map((p) => at(p, 'ip'))
  return podIPs.includes(ip) || at(pod, 'status', 'podIP') === ip
}

/** services/proxy: a ready endpoint with the service port's name, from the Service's EndpointSlices. */
export async function serviceProxyLocation(deps: NodeAgentDeps, namespace: string, id: string): Promise<ProxyLocation> {
  const parsed = splitSchemeNamePort(id)
  if (!parsed) throw badRequest(`invalid service request ${JSON.stringify(id)}`)
  let portName = parsed.port
  // The Service is read first, as upstream's location does: a missing one is a 404 whatever its endpoints.
  const service = await read(deps, 'services', namespace, parsed.name)
  if (/^[+-]?\d+$/.test(portName)) {
    const ports = ((at(service, 'spec', 'ports') as unknown[] | undefined) ?? []).filter(isPlainObject)
    const found = ports.find((p) => p['port'] === Number(portName))
    if (!found) throw serviceUnavailable(`no service port ${Number(portName)} found for service ${JSON.stringify(parsed.name)}`)
    portName = typeof found['name'] === 'string' ? found['name'] : ''
  }
  const entry = deps.catalogue.lookup('discovery.k8s.io', 'v1', 'endpointslices')
  if (!entry) throw serviceUnavailable(`no endpoints available for service ${JSON.stringify(parsed.name)}`)
  // The service's slices: those labelled with its name (kubernetes.io/service-name=<name>).
  const slices = (await deps.stored.list(entry, namespace, { readOnly: true })).filter((s) => s.metadata.labels?.['kubernetes.io/service-name'] === parsed.name)
  if (slices.length === 0) throw serviceUnavailable(`no endpoints available for service ${JSON.stringify(parsed.name)}`)
  for (const slice of slices) {
    const port = ((slice['ports'] as unknown[] | undefined) ?? []).filter(isPlainObject).find((p) => (p['name'] ?? '') === portName)
    if (!port || typeof port['port'] !== 'number') continue
    for (const endpoint of ((slice['endpoints'] as unknown[] | undefined) ?? []).filter(isPlainObject)) {
      if (at(endpoint, 'conditions', 'ready') === false) continue
      const ip = ((endpoint['addresses'] as unknown[] | undefined) ?? []).find((a) => typeof a === 'string') as string | undefined
      // Upstream's endpoints never hold a loopback, link-local or unspecified address (their validation refuses
      // them); these are passed over here, whatever wrote them, so a pod whose status names 127.0.0.1 or the
      // cloud's metadata address cannot turn the proxy on the server's own machine.
      if (!ip || !(await proxyable(deps, ip)) || !(await endpointOfPod(deps, namespace, endpoint, ip))) continue
      return { target: plainTarget(parsed.scheme, ip, String(port['port']), deps.options.timeoutMs) }
    }
  }
  throw serviceUnavailable(`no endpoints available for service ${JSON.stringify(id)}`)
}

/** nodes/proxy: the agent with its own TLS for its port (or none given), else the requested port on the node. */
export async function nodeProxyLocation(deps: NodeAgentDeps, id: string): Promise<ProxyLocation> {
  const parsed = splitSchemeNamePort(id)
  if (!parsed) throw badRequest(`invalid node request ${JSON.stringify(id)}`)
  const connection = await agentConnection(deps, parsed.name).catch((err: unknown) => {
    throw asPlainStatus(err)
  })
  // As upstream's, the node's address is judged before any port, the agent's own too: a kubelet names its own
  // address and port, and one naming a loopback address and this server's port had a `get nodes/proxy` caller
  // reach this server with the agents' client certificate, which the agents' CA verified when it also signed
  // the server's. A simulated agent, answered in process, is no address at all.
  const agent = agentTarget(deps.options, connection.host, connection.port)
  if (!parsed.port || parsed.port === String(connection.port)) {
    if (!deps.transport.answersInProcess?.(agent)) await checkProxyable(deps, connection.host)
    return { target: agent }
  }
  await checkProxyable(deps, connection.host)
  return { target: plainTarget(parsed.scheme, connection.host, parsed.port, deps.options.timeoutMs) }
}

/** Refuses with 400 a host a proxy may not reach (upstream's isProxyableHostname). */
async function checkProxyable(deps: NodeAgentDeps, host: string): Promise<void> {
  const check = deps.checkProxyable ?? defaultProxyableCheck
  await check(host).catch((err: unknown) => {
    throw badRequest(err instanceof Error ? err.message : String(err))
  })
}

/** Whether a proxy may reach `host`: checkProxyable's rule, as a yes or no. */
function proxyable(deps: NodeAgentDeps, host: string): Promise<boolean> {
  return checkProxyable(deps, host).then(
    () => true,
    () => false,
  )
}

/** Without a resolver: an IP literal must be global unicast; a name cannot be judged and is refused. */
async function defaultProxyableCheck(host: string): Promise<void> {
  if (!isGlobalUnicast(host)) throw new Error('address not allowed')
}

/** How a proxied request is sent on. */
export interface ProxyForwarding {
  /** The backend path: the one after `/proxy`, joined and cleaned. */
  path: string
  /** The API server path up to and including `/proxy`. */
  proxyPrefix: string
  /** The runtime's hand-over of the connection, for an upgrade. */
  passUpgrade: PassUpgrade | undefined
  /** The client's address, named onward in `X-Forwarded-For`. */
  remoteAddress: string | undefined
}

/** Forwards the request to `location`, the path after `/proxy` and the query kept, as upstream's proxy transport does. */
export async function forwardProxy(deps: NodeAgentDeps, request: Request, location: ProxyLocation, forwarding: ProxyForwarding): Promise<Response> {
  const { path, proxyPrefix, passUpgrade, remoteAddress } = forwarding
  const url = new URL(request.url)
  const backendPath = (path || '/') + url.search
  // A WebSocket (or any upgrade) to the backend is spliced as upstream's upgrade-aware proxy does;
  // a simulated node's agent, answered in process, has nothing to upgrade to and answers as for any request.
  if (passUpgrade && isUpgradeRequest(request) && !deps.transport.answersInProcess?.(location.target)) {
    const headers = upgradeHeaders(request.headers)
    stripIdentity(headers, undefined, identityHeaderNames(undefined))
    appendForwardedFor(headers, remoteAddress)
    passUpgrade({ target: location.target, request: { method: request.method, path: backendPath, headers } })
    // The runtime answers the client from the backend; this answer is not sent.
    return new Response(null, { status: 200 })
  }
  const headers = new Headers(request.headers)
  stripIdentity(headers, undefined, identityHeaderNames(undefined))
  headers.set('x-forwarded-uri', forwardedUri(proxyPrefix, path || '/'))
  appendForwardedFor(headers, remoteAddress)
  let answer: Response
  try {
    answer = await deps.transport.roundTrip(location.target, { method: request.method, path: backendPath, headers, body: request.body, signal: request.signal })
  } catch (err) {
    // Upstream's proxy answers an unreachable backend with 503 and the dial error.
    throw serviceUnavailable(`error trying to reach service: ${err instanceof Error ? err.message : String(err)}`)
  }
  return proxiedAnswer(answer, { proxyPrefix, backendHost: new URL(location.target.origin).host, requestHost: url.host })
}
