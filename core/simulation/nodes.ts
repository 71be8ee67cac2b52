/**
 * Simulated nodes, as kwok makes them: Node objects that report Ready and
 * renew their Lease in kube-node-lease, each written as that node's own
 * identity (`system:node:<name>`) so the Node authorizer and NodeRestriction
 * see what a kubelet would send. No process runs behind them: the pods bound
 * to them are driven by the simulated kubelet (kubelet.ts).
 */
import type { ObjectClient } from '../client/object-client.js'
import type { Logger } from '../logging/logger.js'
import { formatTimestamp, type KubeObject, type UserInfo } from '../machinery/object.js'
import { hasStatusCode } from '../machinery/status-error.js'
import { controllerIdentity } from '../machinery/identities.js'
import { nodes } from '../resources/core/nodes.js'
import { leases } from '../resources/groups/coordination.js'

/** What `createApiServer({ nodes })` and `--simulated-nodes` give. */
export interface SimulatedNodesOptions {
  count: number
  /** @default 'node-' */
  namePrefix?: string
  /** Each node's capacity (and allocatable). @default { cpu: '8', memory: '32Gi', pods: '110' } */
  capacity?: Record<string, string>
  /** Labels beside upstream's well-known ones (kubernetes.io/hostname, os, arch). */
  labels?: Record<string, string>
  /** How long a bound pod waits before it runs, and a pod expected to exit before it exits. @default 0 */
  startDelayMs?: number
  /** How long a pod whose containers exit (restartPolicy Never or OnFailure) runs. @default 0 */
  runDurationMs?: number
}

export const DEFAULT_CAPACITY: Readonly<Record<string, string>> = { cpu: '8', memory: '32Gi', pods: '110' }
const LEASE_DURATION_SECONDS = 40
const NOT_READY_TAINT = 'node.kubernetes.io/not-ready'
const NODE_CONTROLLER_IDENTITY = controllerIdentity('node-controller')
const LEASE_RENEW_MS = 10_000

/** The identity a kubelet on `node` writes as. */
export function nodeIdentity(node: string): UserInfo {
  return { username: `system:node:${node}`, groups: ['system:nodes', 'system:authenticated'] }
}

/**
 * The client a simulated node writes with: as the node itself where the
 * Node authorizer decides what nodes may do; else (RBAC alone grants
 * system:nodes nothing since 1.8) as the server's loopback identity.
 */
export function nodeClient(client: ObjectClient, node: string, asItself: boolean): ObjectClient {
  return asItself ? client.as(nodeIdentity(node), `kubelet/${node}`) : client.as(client.identity, `kubelet/${node}`)
}

export function nodeNames(options: SimulatedNodesOptions): string[] {
  return Array.from({ length: options.count }, (_, i) => `${options.namePrefix ?? 'node-'}${i}`)
}

/** Each node's address: documentation range 192.0.2.0/24, which nothing on a real network answers. */
export function nodeAddress(index: number): string {
  return `192.0.2.${index + 1}`
}

function nodeObject(name: string, index: number, options: SimulatedNodesOptions, now: Date, kubeletVersion: string): KubeObject {
  const capacity = { ...DEFAULT_CAPACITY, ...options.capacity }
  const at = formatTimestamp(now)
  const condition = (type: string, status: string, reason: string, message: string) => ({ type, status, reason, message, lastHeartbeatTime: at, lastTransitionTime: at })
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', 'beta.kubernetes.io/os': 'linux', 'beta.kubernetes.io/arch': 'amd64', ...options.labels },
      annotations: { 'node.alpha.kubernetes.io/ttl': '0' },
    },
    spec: { podCIDR: `10.244.${index}.0/24`, podCIDRs: [`10.244.${index}.0/24`] },
    status: {
      capacity,
      allocatable: capacity,
      conditions: [
        condition('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
        condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
        condition('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
        condition('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
      ],
      addresses: [
        { type: 'InternalIP', address: nodeAddress(index) },
        { type: 'Hostname', address: name },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        machineID: '',
        systemUUID: '',
        bootID: '',
        kernelVersion: '',
        osImage: 'simulated',
        containerRuntimeVersion: 'simulated://1.0',
        kubeletVersion,
        kubeProxyVersion: '',
        operatingSystem: 'linux',
        architecture: 'amd64',
      },
    },
  }
}

/**
 * Registers the nodes (their status written as the kubelet writes it, through
 * nodes/status) and keeps their leases renewed. Resolves once every node is
 * registered; the function it resolves to stops the renewals.
 */
export async function registerNodes(
  client: ObjectClient,
  options: SimulatedNodesOptions,
  asItself: boolean,
  now: () => Date,
  logger: Logger,
  kubeletVersion: string,
): Promise<() => void> {
  const names = nodeNames(options)
  await Promise.all(
    names.map(async (name, index) => {
      const kubelet = nodeClient(client, name, asItself)
      const node = nodeObject(name, index, options, now(), kubeletVersion)
      try {
        const created = await kubelet.create(nodes, '', node)
        const ready = await kubelet.updateStatus(nodes, '', { ...created, status: node['status'] })
        await liftNotReadyTaint(client, ready)
      } catch (err) {
        // Registered by an earlier start on the same store: the node is there already.
        if (!hasStatusCode(err, 409)) throw err
      }
      await renewLease(kubelet, name, now)
    }),
  )
  const timer = setInterval(() => {
    for (const name of names) {
      renewLease(nodeClient(client, name, asItself), name, now).catch((err: unknown) =>
        logger.warn({ node: name, err: String(err) }, 'a simulated node could not renew its lease'),
      )
    }
  }, LEASE_RENEW_MS)
  // A timer of the server's own must not keep an embedding program alive.
  ;(timer as { unref?: () => void }).unref?.()
  return () => clearInterval(timer)
}

/**
 * A node is created tainted not-ready (TaintNodesByCondition); upstream's
 * node lifecycle controller lifts the taint once the node reports Ready, as
 * the node controller's account does here.
 */
async function liftNotReadyTaint(client: ObjectClient, node: KubeObject): Promise<void> {
  const spec = (node['spec'] ?? {}) as { taints?: { key: string }[] }
  const taints = spec.taints ?? []
  if (!taints.some((t) => t.key === NOT_READY_TAINT)) return
  const rest = taints.filter((t) => t.key !== NOT_READY_TAINT)
  await client.as(NODE_CONTROLLER_IDENTITY, 'kube-controller-manager/node-controller').update(nodes, '', { ...node, spec: { ...spec, taints: rest.length ? rest : undefined } })
}

async function renewLease(kubelet: ObjectClient, node: string, now: () => Date): Promise<void> {
  const renewTime = now().toISOString().replace('Z', '000Z')
  const lease: KubeObject = {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: node, namespace: 'kube-node-lease' },
    spec: { holderIdentity: node, leaseDurationSeconds: LEASE_DURATION_SECONDS, renewTime },
  }
  try {
    const current = await kubelet.get(leases, 'kube-node-lease', node)
    await kubelet.update(leases, 'kube-node-lease', { ...current, spec: { ...(current['spec'] as object), renewTime } })
  } catch (err) {
    if (!hasStatusCode(err, 404)) throw err
    await kubelet.create(leases, 'kube-node-lease', lease)
  }
}
