/**
 * How the server reaches a node's agent (upstream's NodeConnectionInfoGetter):
 * the node's address of the first `--nodeagent-preferred-address-types` type
 * its status lists, the port its agent reports in
 * `status.daemonEndpoints.kubeletEndpoint.Port` (10250 when it reports none),
 * over HTTPS verified with `--nodeagent-certificate-authority` and presenting
 * the `--nodeagent-client-*` pair, the dial bounded by `--nodeagent-timeout`.
 */
import type { ProxyTarget, ProxyTransport } from '../proxy/transport.js'
import type { StoredObjects } from '../client/stored-objects.js'
import type { Catalogue } from '../resources/catalogue.js'
import { isPlainObject, type KubeObject } from '../machinery/object.js'
import { asPlainStatus } from './errors.js'

export interface NodeAgentOptions {
  /** `--nodeagent-preferred-address-types`, in order. */
  preferredAddressTypes: readonly string[]
  /** Base64 of the PEM CAs of `--nodeagent-certificate-authority`; absent, the agent's certificate is not verified (as upstream). */
  caBundle?: string
  /** The PEM pair of `--nodeagent-client-certificate` and `--nodeagent-client-key`. */
  clientCertificate?: { certificate: string; key: string }
  /** `--nodeagent-timeout`: how long connecting to an agent may take. */
  timeoutMs: number
  /** `--max-connection-bytes-per-sec`: the most bytes a second a pods/log stream carries. @default unlimited */
  maxBytesPerSec?: number
}

/** What core needs to reach node agents and, for pods/proxy and services/proxy, the cluster network. */
export interface NodeAgentDeps {
  /** The resources served, and the nodes, pods, services and endpoint slices read as stored (no request per call). */
  catalogue: Catalogue
  stored: StoredObjects
  transport: ProxyTransport
  options: NodeAgentOptions
  /**
   * Refuses (with its reason) a host a proxy subresource may not reach:
   * upstream proxies only to global unicast addresses, resolving names
   * first. The runtime resolves; the default judges IP literals alone.
   */
  checkProxyable?: (host: string) => Promise<void>
}

/** The agent port a node that reports none is reached on (upstream's default). */
export const DEFAULT_AGENT_PORT = 10250

export interface AgentConnection {
  host: string
  port: number
  /** The transport settings of a call to this agent. */
  target: ProxyTarget
}

type NodeAddress = { type?: unknown; address?: unknown }

/** `host:port`, bracketing an IPv6 literal. */
export function joinHostPort(host: string, port: number | string): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`
}

/** The address of the first preferred type, as upstream's GetPreferredNodeAddress picks it. */
export function preferredAddress(node: KubeObject, types: readonly string[]): string {
  const status = isPlainObject(node['status']) ? node['status'] : {}
  const addresses = (Array.isArray(status['addresses']) ? status['addresses'] : []).filter(isPlainObject) as NodeAddress[]
  for (const type of types) {
    const found = addresses.find((a) => a.type === type && typeof a.address === 'string')
    if (found) return found.address as string
  }
  // Go prints the list with %v: [{InternalIP 10.0.0.1} {Hostname n1}].
  const known = addresses.map((a) => `{${String(a.type ?? '')} ${String(a.address ?? '')}}`).join(' ')
  throw new Error(`no preferred addresses found; known addresses: [${known}]`)
}

/** The port the node's agent reports, or the default. */
export function agentPort(node: KubeObject): number {
  const status = isPlainObject(node['status']) ? node['status'] : {}
  const endpoints = isPlainObject(status['daemonEndpoints']) ? status['daemonEndpoints'] : {}
  const kubelet = isPlainObject(endpoints['kubeletEndpoint']) ? endpoints['kubeletEndpoint'] : {}
  const port = kubelet['Port']
  return typeof port === 'number' && port > 0 ? port : DEFAULT_AGENT_PORT
}

/** The transport settings of every call to a node agent. */
export function agentTarget(options: NodeAgentOptions, host: string, port: number, insecureSkipTLSVerify = false): ProxyTarget {
  return {
    origin: `https://${joinHostPort(host, port)}`,
    ...(options.caBundle && !insecureSkipTLSVerify ? { caBundle: options.caBundle } : {}),
    // Without a CA upstream does not verify the agent's certificate either.
    ...(!options.caBundle || insecureSkipTLSVerify ? { insecureSkipTLSVerify: true } : {}),
    ...(options.clientCertificate ? { clientCertificate: options.clientCertificate } : {}),
    dialTimeoutMs: options.timeoutMs,
    egress: 'cluster',
  }
}

/** Reads the node and answers where its agent listens; a missing node is upstream's NotFound. */
export async function agentConnection(deps: NodeAgentDeps, nodeName: string, insecureSkipTLSVerify = false): Promise<AgentConnection> {
  const entry = deps.catalogue.lookup('', 'v1', 'nodes')
  if (!entry) throw new Error('nodes are not served')
  const node = await deps.stored.get(entry, '', nodeName)
  let host: string
  try {
    host = preferredAddress(node, deps.options.preferredAddressTypes)
  } catch (err) {
    // A plain error upstream: a 500 with its text alone.
    throw asPlainStatus(err)
  }
  const port = agentPort(node)
  return { host, port, target: agentTarget(deps.options, host, port, insecureSkipTLSVerify) }
}
