/**
 * Writes through the `status` subresource of Pods, Services, Namespaces and
 * Nodes are checked as upstream's status strategies check them at 1.32: the
 * status rules (and the metadata rules) alone, never the spec's, each
 * refusal a 422 in upstream's words that leaves the stored object as it was.
 * Nodes are also checked on create and update, pods' own annotations on
 * every write, and a pod's or node's single address field is held together
 * with its list as v1's conversion holds them.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { startServer, type TestClient } from './harness.js'

const PODS = '/api/v1/namespaces/default/pods'
const SERVICES = '/api/v1/namespaces/default/services'
const NAMESPACES = '/api/v1/namespaces'
const NODES = '/api/v1/nodes'
const IP_MESSAGE = 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'
const NAME_PART =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
const SUBDOMAIN =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"

let api: TestClient
let serial = 0

before(async () => {
  api = await startServer()
})

async function create(collection: string, body: Record<string, unknown>): Promise<string> {
  const res = await api.post(collection, body)
  assert.equal(res.status, 201, res.text)
  return `${collection}/${res.body.metadata.name}`
}

function pod(restartPolicy = 'Never', extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { metadata: { name: `pod-${++serial}` }, spec: { restartPolicy, containers: [{ name: 'c', image: 'nginx' }], ...extra } }
}

/** Writes `change(current)` through `status`, from a fresh read (again after a conflict with a controller's write). */
async function putStatus(path: string, change: (current: any) => any) {
  return api.update(`${path}/status`, (current) => change(structuredClone(current)))
}

const withStatus = (status: Record<string, unknown>) => (current: any) => ({ ...current, status: { ...current.status, ...status } })

async function accepts(path: string, change: (current: any) => any): Promise<any> {
  const res = await putStatus(path, change)
  assert.equal(res.status, 200, res.text)
  return res.body
}

/**
 * A 422 with this message, and the stored object unchanged (`kept` picks
 * what to compare where a controller may write the object meanwhile).
 */
async function refuses(path: string, change: (current: any) => any, message: string, kept = (obj: any): unknown => obj): Promise<any> {
  const stored = (await api.get(path)).body
  const res = await putStatus(path, change)
  assert.equal(res.status, 422, res.text)
  assert.equal(res.body.reason, 'Invalid')
  assert.equal(res.body.message, message)
  assert.deepEqual(kept((await api.get(path)).body), kept(stored), 'nothing stored')
  return res.body
}

const terminated = (exitCode: number) => ({ terminated: { exitCode, startedAt: '2024-01-01T00:00:00Z', finishedAt: '2024-01-01T00:00:01Z' } })
const running = { running: { startedAt: '2024-01-01T00:00:02Z' } }
const containerStatus = (name: string, state: Record<string, unknown>) => ({ name, state, ready: false, restartCount: 0, image: 'nginx', imageID: '' })

describe('pods/status', () => {
  it('refuses a condition without a type, naming it metadata.conditions[i].Type as upstream does', async () => {
    const path = await create(PODS, pod())
    const name = path.split('/').pop()
    const body = await refuses(
      path,
      withStatus({ conditions: [{ type: 'Ready', status: 'True' }, { status: 'True' }] }),
      `Pod "${name}" is invalid: [metadata.conditions[1].Type: Invalid value: "": name part must be non-empty, metadata.conditions[1].Type: Invalid value: "": ${NAME_PART}]`,
    )
    assert.deepEqual(
      body.details.causes.map((c: { field: string }) => c.field),
      ['metadata.conditions[1].Type', 'metadata.conditions[1].Type'],
    )
    // The system's own conditions and qualified custom ones pass.
    await accepts(path, withStatus({ conditions: [{ type: 'Ready', status: 'True' }, { type: 'example.com/Warm', status: 'True' }] }))
  })

  it('reads podIP into podIPs[0] before checking the addresses, and keeps them together', async () => {
    const path = await create(PODS, pod())
    const name = path.split('/').pop()
    await refuses(path, withStatus({ podIP: 'x' }), `Pod "${name}" is invalid: status.podIPs[0]: Invalid value: "x": ${IP_MESSAGE}`)
    await refuses(path, withStatus({ podIPs: [{ ip: 'x' }] }), `Pod "${name}" is invalid: status.podIPs[0]: Invalid value: "x": ${IP_MESSAGE}`)
    // The single field wins over a list that disagrees with it, as older kubelets write it.
    await refuses(
      path,
      withStatus({ podIP: 'y', podIPs: [{ ip: '10.0.0.1' }, { ip: 'fd00::1' }] }),
      `Pod "${name}" is invalid: status.podIPs[0]: Invalid value: "y": ${IP_MESSAGE}`,
    )
    let stored = await accepts(path, withStatus({ podIP: '10.0.0.1' }))
    assert.deepEqual([stored.status.podIP, stored.status.podIPs], ['10.0.0.1', [{ ip: '10.0.0.1' }]])
    stored = await accepts(path, (current) => ({ ...current, status: { ...current.status, podIP: undefined, podIPs: [{ ip: '10.0.0.2' }, { ip: 'fd00::2' }] } }))
    assert.deepEqual([stored.status.podIP, stored.status.podIPs], ['10.0.0.2', [{ ip: '10.0.0.2' }, { ip: 'fd00::2' }]])
  })

  it('allows one pod address per family, each once', async () => {
    const path = await create(PODS, pod())
    const name = path.split('/').pop()
    await refuses(
      path,
      withStatus({ podIP: '10.0.0.1', podIPs: [{ ip: '10.0.0.1' }, { ip: '10.0.0.1' }] }),
      `Pod "${name}" is invalid: [status.podIPs: Invalid value: []core.PodIP{core.PodIP{IP:"10.0.0.1"}, core.PodIP{IP:"10.0.0.1"}}: may specify no more than one IP for each IP family, status.podIPs[1]: Duplicate value: core.PodIP{IP:"10.0.0.1"}]`,
    )
    await refuses(
      path,
      withStatus({ podIP: '10.0.0.1', podIPs: [{ ip: '10.0.0.1' }, { ip: 'zz' }] }),
      `Pod "${name}" is invalid: [status.podIPs[1]: Invalid value: "zz": ${IP_MESSAGE}, status.podIPs: Internal error: failed to check for dual stack with error:invalid IP[1]: zz, status.podIPs: Invalid value: []core.PodIP{core.PodIP{IP:"10.0.0.1"}, core.PodIP{IP:"zz"}}: may specify no more than one IP for each IP family]`,
    )
    await refuses(
      path,
      withStatus({ podIP: '10.0.0.1', podIPs: [{ ip: '10.0.0.1' }, { ip: 'fd00::1' }, { ip: '10.0.0.3' }] }),
      `Pod "${name}" is invalid: status.podIPs: Invalid value: []core.PodIP{core.PodIP{IP:"10.0.0.1"}, core.PodIP{IP:"fd00::1"}, core.PodIP{IP:"10.0.0.3"}}: may specify no more than one IP for each IP family`,
    )
  })

  it('holds the host addresses to hostIP, one per family, each once', async () => {
    const path = await create(PODS, pod())
    const name = path.split('/').pop()
    await refuses(path, withStatus({ hostIPs: [{ ip: '192.0.2.1' }] }), `Pod "${name}" is invalid: status.hostIPs[0].ip: Invalid value: "192.0.2.1": must be equal to \`hostIP\``)
    await refuses(path, withStatus({ hostIP: 'x', hostIPs: [{ ip: 'x' }] }), `Pod "${name}" is invalid: status.hostIPs[0]: Invalid value: "x": ${IP_MESSAGE}`)
    await refuses(
      path,
      withStatus({ hostIP: '192.0.2.1', hostIPs: [{ ip: '192.0.2.1' }, { ip: '192.0.2.1' }] }),
      `Pod "${name}" is invalid: [status.hostIPs[1]: Duplicate value: core.HostIP{IP:"192.0.2.1"}, status.hostIPs: Invalid value: []core.HostIP{core.HostIP{IP:"192.0.2.1"}, core.HostIP{IP:"192.0.2.1"}}: may specify no more than one IP for each IP family]`,
    )
    // A hostIP without a list is not checked at all, as upstream leaves it.
    await accepts(path, withStatus({ hostIP: 'anything' }))
    await accepts(path, withStatus({ hostIP: '192.0.2.1', hostIPs: [{ ip: '192.0.2.1' }, { ip: '2001:db8::1' }] }))
  })

  it('checks a new nominated node name, and keeps the QoS class', async () => {
    const path = await create(PODS, pod())
    const name = path.split('/').pop()
    await refuses(path, withStatus({ nominatedNodeName: 'Bad_Name' }), `Pod "${name}" is invalid: status.nominatedNodeName: Invalid value: "Bad_Name": ${SUBDOMAIN}`)
    await accepts(path, withStatus({ nominatedNodeName: 'node-1' }))
    await refuses(path, withStatus({ qosClass: 'Guaranteed' }), `Pod "${name}" is invalid: status.qosClass: Invalid value: "Guaranteed": field is immutable`)
    // A write without a QoS class keeps the stored one (older node agents drop it).
    const stored = await accepts(path, withStatus({ qosClass: '' }))
    assert.equal(stored.status.qosClass, 'BestEffort')
  })

  it('never brings back a container that ended for good', async () => {
    const never = await create(PODS, pod('Never'))
    await accepts(never, withStatus({ containerStatuses: [containerStatus('c', terminated(0))] }))
    await refuses(
      never,
      withStatus({ containerStatuses: [containerStatus('c', running)] }),
      `Pod "${never.split('/').pop()}" is invalid: status.containerStatuses[0].state: Forbidden: may not be transitioned to non-terminated state`,
    )
    // OnFailure restarts a failed container, not one that succeeded.
    const onFailure = await create(PODS, pod('OnFailure'))
    await accepts(onFailure, withStatus({ containerStatuses: [containerStatus('c', terminated(1))] }))
    await accepts(onFailure, withStatus({ containerStatuses: [containerStatus('c', running)] }))
    await accepts(onFailure, withStatus({ containerStatuses: [containerStatus('c', terminated(0))] }))
    await refuses(
      onFailure,
      withStatus({ containerStatuses: [containerStatus('c', running)] }),
      `Pod "${onFailure.split('/').pop()}" is invalid: status.containerStatuses[0].state: Forbidden: may not be transitioned to non-terminated state`,
    )
    const always = await create(PODS, pod('Always'))
    await accepts(always, withStatus({ containerStatuses: [containerStatus('c', terminated(0))] }))
    await accepts(always, withStatus({ containerStatuses: [containerStatus('c', running)] }))
  })

  it('restarts sidecar init containers whatever the policy, and never ephemeral ones', async () => {
    const path = await create(
      PODS,
      pod('Never', {
        initContainers: [
          { name: 'init', image: 'busybox' },
          { name: 'sidecar', image: 'busybox', restartPolicy: 'Always' },
        ],
      }),
    )
    const name = path.split('/').pop()
    await accepts(path, withStatus({ initContainerStatuses: [containerStatus('init', terminated(0)), containerStatus('sidecar', terminated(0))] }))
    await refuses(
      path,
      withStatus({ initContainerStatuses: [containerStatus('init', running), containerStatus('sidecar', running)] }),
      `Pod "${name}" is invalid: status.initContainerStatuses[0].state: Forbidden: may not be transitioned to non-terminated state`,
    )
    await accepts(path, withStatus({ initContainerStatuses: [containerStatus('init', terminated(0)), containerStatus('sidecar', running)] }))
    await accepts(path, withStatus({ ephemeralContainerStatuses: [containerStatus('debug', terminated(0))] }))
    await refuses(
      path,
      withStatus({ ephemeralContainerStatuses: [containerStatus('debug', running)] }),
      `Pod "${name}" is invalid: status.ephemeralContainerStatuses[0].state: Forbidden: may not be transitioned to non-terminated state`,
    )
  })

  it('checks the annotations a pod reads, through status as on every write', async () => {
    const path = await create(PODS, pod())
    const name = path.split('/').pop()
    const annotate = (annotations: Record<string, string>) => (current: any) => ({ ...current, metadata: { ...current.metadata, annotations } })
    await refuses(
      path,
      annotate({ 'kubernetes.io/config.mirror': 'x' }),
      `Pod "${name}" is invalid: [metadata.annotations[kubernetes.io/config.mirror]: Forbidden: may not add mirror pod annotation, metadata.annotations[kubernetes.io/config.mirror]: Invalid value: "x": must set spec.nodeName if mirror pod annotation is set]`,
    )
    await refuses(
      path,
      annotate({ 'controller.kubernetes.io/pod-deletion-cost': '+10' }),
      `Pod "${name}" is invalid: metadata.annotations[controller.kubernetes.io/pod-deletion-cost]: Invalid value: "+10": must be a 32bit integer`,
    )
    await refuses(
      path,
      annotate({ 'seccomp.security.alpha.kubernetes.io/pod': 'localhost/../x', 'container.apparmor.security.beta.kubernetes.io/other': 'bad' }),
      `Pod "${name}" is invalid: [metadata.annotations[container.apparmor.security.beta.kubernetes.io/other]: Forbidden: may not add AppArmor annotations, metadata.annotations.seccomp.security.alpha.kubernetes.io/pod: Invalid value: "../x": must not contain '..', metadata.annotations[container.apparmor.security.beta.kubernetes.io/other]: Invalid value: "other": container not found, metadata.annotations[container.apparmor.security.beta.kubernetes.io/other]: Invalid value: "bad": invalid AppArmor profile name: "bad"]`,
    )
    await accepts(path, annotate({ 'controller.kubernetes.io/pod-deletion-cost': '-7', 'seccomp.security.alpha.kubernetes.io/pod': 'runtime/default' }))
    // The same rules refuse a create, which stores nothing.
    const bad = pod()
    ;(bad['metadata'] as Record<string, unknown>)['annotations'] = { 'controller.kubernetes.io/pod-deletion-cost': '2147483648' }
    const res = await api.post(PODS, bad)
    assert.equal(res.status, 422, res.text)
    const badName = (bad['metadata'] as { name: string }).name
    assert.equal(res.body.message, `Pod "${badName}" is invalid: metadata.annotations[controller.kubernetes.io/pod-deletion-cost]: Invalid value: "2147483648": must be a 32bit integer`)
    assert.equal((await api.get(`${PODS}/${badName}`)).status, 404)
  })

  it('does not check the spec on a status write', async () => {
    const path = await create(PODS, pod())
    // The spec sent is ignored (the stored one stays), so its problems are not the status write's.
    const stored = await accepts(path, (current) => ({ ...current, spec: { ...current.spec, containers: [] }, status: { ...current.status, phase: 'Running' } }))
    assert.equal(stored.status.phase, 'Running')
    assert.equal(stored.spec.containers.length, 1)
  })
})

describe('services/status', () => {
  it('gives load-balancer ingress points to LoadBalancer services alone', async () => {
    const path = await create(SERVICES, { metadata: { name: 'cluster-ip' }, spec: { ports: [{ port: 80 }] } })
    await refuses(
      path,
      withStatus({ loadBalancer: { ingress: [{ ip: 'x' }] } }),
      `Service "cluster-ip" is invalid: status.loadBalancer.ingress: Forbidden: may only be used when \`spec.type\` is 'LoadBalancer'`,
    )
    await accepts(path, withStatus({ loadBalancer: {}, conditions: [{ type: 'Ready', status: 'True', reason: 'Checked', message: 'ok', lastTransitionTime: '2024-01-01T00:00:00Z' }] }))
  })

  it('checks each ingress point of a LoadBalancer service, its ipMode defaulting to VIP', async () => {
    const path = await create(SERVICES, { metadata: { name: 'balanced' }, spec: { type: 'LoadBalancer', ports: [{ port: 80 }] } })
    await refuses(path, withStatus({ loadBalancer: { ingress: [{ ip: 'x' }] } }), `Service "balanced" is invalid: status.loadBalancer.ingress[0].ip: Invalid value: "x": ${IP_MESSAGE}`)
    await refuses(
      path,
      withStatus({ loadBalancer: { ingress: [{ hostname: '1.2.3.4' }, { hostname: 'Bad_Host' }] } }),
      `Service "balanced" is invalid: [status.loadBalancer.ingress[0].hostname: Invalid value: "1.2.3.4": must be a DNS name, not an IP address, status.loadBalancer.ingress[1].hostname: Invalid value: "Bad_Host": ${SUBDOMAIN}]`,
    )
    await refuses(
      path,
      withStatus({ loadBalancer: { ingress: [{ ip: '192.0.2.7', ipMode: 'Direct' }, { hostname: 'lb.example.com', ipMode: 'VIP' }] } }),
      `Service "balanced" is invalid: [status.loadBalancer.ingress[0].ipMode: Unsupported value: "Direct": supported values: "Proxy", "VIP", status.loadBalancer.ingress[1].ipMode: Forbidden: may not be specified when \`ip\` is not set]`,
    )
    const stored = await accepts(path, withStatus({ loadBalancer: { ingress: [{ ip: '192.0.2.7' }, { hostname: 'lb.example.com' }, { ip: '192.0.2.8', ipMode: 'Proxy' }] } }))
    assert.deepEqual(stored.status.loadBalancer.ingress, [{ ip: '192.0.2.7', ipMode: 'VIP' }, { hostname: 'lb.example.com' }, { ip: '192.0.2.8', ipMode: 'Proxy' }])
  })
})

describe('ingresses/status', () => {
  it('checks each load-balancer point as a Service\u2019s, without ipMode', async () => {
    const path = await create('/apis/networking.k8s.io/v1/namespaces/default/ingresses', {
      metadata: { name: 'web' },
      spec: { defaultBackend: { service: { name: 'web', port: { number: 80 } } } },
    })
    await refuses(
      path,
      withStatus({ loadBalancer: { ingress: [{ ip: 'x' }, { hostname: '1.2.3.4' }] } }),
      `Ingress.networking.k8s.io "web" is invalid: [status.loadBalancer.ingress[0].ip: Invalid value: "x": ${IP_MESSAGE}, status.loadBalancer.ingress[1].hostname: Invalid value: "1.2.3.4": must be a DNS name, not an IP address]`,
    )
    const stored = await accepts(path, withStatus({ loadBalancer: { ingress: [{ ip: '192.0.2.7' }, { hostname: 'lb.example.com' }] } }))
    assert.deepEqual(stored.status.loadBalancer.ingress, [{ ip: '192.0.2.7' }, { hostname: 'lb.example.com' }])
  })
})

describe('namespaces/status', () => {
  it('keeps a namespace Active while it is not being deleted, naming the field status.Phase', async () => {
    const path = await create(NAMESPACES, { metadata: { name: 'status-phases' } })
    await refuses(path, withStatus({ phase: 'Bad' }), 'Namespace "status-phases" is invalid: status.Phase: Invalid value: "Bad": may only be \'Active\' if `deletionTimestamp` is empty')
    await refuses(path, withStatus({ phase: 'Terminating' }), 'Namespace "status-phases" is invalid: status.Phase: Invalid value: "Terminating": may only be \'Active\' if `deletionTimestamp` is empty')
    // A status without a phase is Active by default; the finalizers are not the status write's to check.
    const stored = await accepts(path, (current) => ({ ...current, spec: { finalizers: ['not a finalizer'] }, status: {} }))
    assert.equal(stored.status.phase, 'Active')
    assert.deepEqual(stored.spec.finalizers, ['kubernetes'])
  })

  it('keeps a namespace Terminating once it is being deleted', async () => {
    const path = await create(NAMESPACES, { metadata: { name: 'status-terminating', finalizers: ['example.com/hold'] } })
    assert.equal((await api.delete(path)).status, 200)
    // The namespace controller reports on the namespace's content meanwhile: the phase is what must stay.
    const phase = (ns: any): unknown => ns.status.phase
    await refuses(
      path,
      withStatus({ phase: 'Active' }),
      'Namespace "status-terminating" is invalid: status.Phase: Invalid value: "Active": may only be \'Terminating\' if `deletionTimestamp` is not empty',
      phase,
    )
    await refuses(
      path,
      (current) => ({ ...current, status: {} }),
      'Namespace "status-terminating" is invalid: status.Phase: Invalid value: "Active": may only be \'Terminating\' if `deletionTimestamp` is not empty',
      phase,
    )
    assert.equal((await api.update(`${path}/status`, (current) => ({ ...current, status: { ...current.status, phase: 'Terminating' } }))).status, 200)
    // Let it go (the namespace controller may write it meanwhile).
    const res = await api.update(path, (current) => ({ ...current, metadata: { ...current.metadata, finalizers: [] } }))
    assert.equal(res.status, 200, res.text)
  })
})

describe('nodes', () => {
  it('refuses a node whose capacity, taints or pod CIDRs are invalid, and stores nothing', async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      [
        'node-capacity',
        { status: { capacity: { cpu: '-1', 'example.com/gpu': '500m' } } },
        // Allocatable is defaulted from capacity first, so it is refused too.
        'Node "node-capacity" is invalid: [status.capacity.cpu: Invalid value: "-1": must be greater than or equal to 0, status.capacity.example.com/gpu: Invalid value: resource.Quantity{i:resource.int64Amount{value:500, scale:-3}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"500m", Format:"DecimalSI"}: must be an integer, status.allocatable.cpu: Invalid value: "-1": must be greater than or equal to 0, status.allocatable.example.com/gpu: Invalid value: resource.Quantity{i:resource.int64Amount{value:500, scale:-3}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"500m", Format:"DecimalSI"}: must be an integer]',
      ],
      [
        'node-taints',
        { spec: { taints: [{ key: 'a', effect: 'NoSchedule' }, { key: 'a', effect: 'NoSchedule' }, { key: 'bad key!', value: 'ok', effect: 'Maybe' }, { key: 'c' }] } },
        `Node "node-taints" is invalid: [metadata.taints[1]: Duplicate value: core.Taint{Key:"a", Value:"", Effect:"NoSchedule", TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and effect pair, metadata.taints[2].key: Invalid value: "bad key!": ${NAME_PART}, metadata.taints[2].effect: Unsupported value: "Maybe": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute", metadata.taints[3].effect: Required value]`,
      ],
      [
        'node-cidrs',
        { spec: { podCIDRs: ['10.0.0.0/24', '10.0.1.0/24'] } },
        'Node "node-cidrs" is invalid: spec.podCIDRs: Invalid value: []string{"10.0.0.0/24", "10.0.1.0/24"}: may specify no more than one CIDR for each IP family',
      ],
      [
        'node-cidr',
        { spec: { podCIDR: 'x' } },
        'Node "node-cidr" is invalid: spec.podCIDRs[0]: Invalid value: "x": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)',
      ],
      [
        'node-cidrs-bad',
        { spec: { podCIDRs: ['10.0.0.0/24', 'x'] } },
        'Node "node-cidrs-bad" is invalid: [spec.podCIDRs[1]: Invalid value: "x": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64), spec.podCIDRs: Internal error: invalid PodCIDRs. failed to check with dual stack with error:invalid CIDR[1]: <nil> (invalid CIDR address: x), spec.podCIDRs: Invalid value: []string{"10.0.0.0/24", "x"}: may specify no more than one CIDR for each IP family]',
      ],
    ]
    for (const [name, body, message] of cases) {
      const res = await api.post(NODES, { metadata: { name }, ...body })
      assert.equal(res.status, 422, res.text)
      assert.equal(res.body.message, message)
      assert.equal((await api.get(`${NODES}/${name}`)).status, 404)
    }
  })

  it('stores a valid node with its status, podCIDR and podCIDRs held together', async () => {
    const path = await create(NODES, {
      metadata: { name: 'node-valid' },
      spec: { podCIDR: '10.0.0.0/24', providerID: 'provider://a', taints: [{ key: 'a', effect: 'NoSchedule' }, { key: 'a', effect: 'NoExecute' }] },
      status: { capacity: { cpu: '4', pods: '110' }, addresses: [{ type: 'InternalIP', address: '192.0.2.1' }], config: { active: {} } },
    })
    const node = (await api.get(path)).body
    assert.deepEqual([node.spec.podCIDR, node.spec.podCIDRs], ['10.0.0.0/24', ['10.0.0.0/24']])
    assert.deepEqual(node.status.allocatable, { cpu: '4', pods: '110' })
    assert.equal(node.status.config, undefined, 'the removed dynamic kubelet configuration is dropped')
  })

  it('checks a status write with the update rules: quantities and repeated addresses', async () => {
    const path = await create(NODES, { metadata: { name: 'node-status' }, spec: { podCIDR: '10.1.0.0/24' } })
    await refuses(
      path,
      withStatus({ capacity: { memory: '-1Gi' }, addresses: [{ type: 'InternalIP', address: '192.0.2.9' }, { type: 'InternalIP', address: '192.0.2.9' }] }),
      'Node "node-status" is invalid: [status.capacity.memory: Invalid value: "-1Gi": must be greater than or equal to 0, status.allocatable.memory: Invalid value: "-1Gi": must be greater than or equal to 0, status.addresses[1]: Duplicate value: core.NodeAddress{Type:"InternalIP", Address:"192.0.2.9"}]',
    )
    const stored = await accepts(path, withStatus({ capacity: { pods: '10' }, allocatable: { pods: '8' }, addresses: [{ type: 'InternalIP', address: '192.0.2.9' }, { type: 'Hostname', address: '192.0.2.9' }] }))
    assert.deepEqual(stored.status.allocatable, { pods: '8' })
  })

  it('keeps the pod CIDRs and provider ID once set, and the external ID always', async () => {
    const path = await create(NODES, { metadata: { name: 'node-update' }, spec: { podCIDR: '10.2.0.0/24', providerID: 'provider://b' } })
    const current = (await api.get(path)).body
    const res = await api.put(path, { ...current, spec: { ...current.spec, podCIDR: '10.3.0.0/24', podCIDRs: ['10.3.0.0/24'], providerID: 'provider://c', externalID: 'e' } })
    assert.equal(res.status, 422, res.text)
    assert.equal(
      res.body.message,
      'Node "node-update" is invalid: [spec.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to valid, spec.providerID: Forbidden: node updates may not change providerID except from "" to valid, spec.externalID: Forbidden: may not be updated]',
    )
    assert.equal((await api.put(path, { ...current, spec: { ...current.spec, unschedulable: true } })).status, 200)
  })
})
