/**
 * Table cells as upstream's printers compute them, for the kinds whose
 * cells take reasoning: a pod's STATUS and RESTARTS, a service's ports and
 * external IPs, a job's status, selectors, an event's object.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { ResourceEntry } from '../../../core/resources/catalogue.js'
import { formatLabelSelector, formatLabels } from '../../../core/resources/columns/format.js'
import { podSummary } from '../../../core/resources/columns/pod-status.js'
import { events } from '../../../core/resources/core/events.js'
import { nodes } from '../../../core/resources/core/nodes.js'
import { services } from '../../../core/resources/core/services.js'
import { jobs } from '../../../core/resources/groups/batch.js'
import { ipAddresses } from '../../../core/resources/groups/networking.js'
import type { KubeObject } from '../../../core/machinery/object.js'

const NOW = new Date('2024-05-01T12:00:00Z')

function pod(fields: Record<string, unknown>, meta: Partial<KubeObject['metadata']> = {}): KubeObject {
  return { metadata: { name: 'p', ...meta }, spec: { containers: [{ name: 'a' }, { name: 'b' }] }, ...fields }
}

function cells(entry: ResourceEntry, obj: KubeObject): Record<string, unknown> {
  return Object.fromEntries(entry.columns.map((c) => [c.name, c.cell(obj, NOW)]))
}

describe('pod STATUS, READY and RESTARTS', () => {
  it('shows the phase, and how many containers are ready', () => {
    const running = pod({
      status: {
        phase: 'Running',
        containerStatuses: [
          { name: 'a', ready: true, restartCount: 0, state: { running: {} } },
          { name: 'b', ready: false, restartCount: 0, state: { running: {} } },
        ],
      },
    })
    assert.deepEqual(podSummary(running, NOW), { ready: '1/2', status: 'Running', restarts: '0' })
  })

  it('shows a waiting container’s reason and when it last restarted', () => {
    const crashing = pod({
      status: {
        phase: 'Running',
        containerStatuses: [
          { name: 'a', ready: true, restartCount: 0, state: { running: {} } },
          {
            name: 'b',
            restartCount: 4,
            state: { waiting: { reason: 'CrashLoopBackOff' } },
            lastState: { terminated: { exitCode: 1, finishedAt: '2024-05-01T11:55:00Z' } },
          },
        ],
      },
    })
    assert.deepEqual(podSummary(crashing, NOW), { ready: '1/2', status: 'CrashLoopBackOff', restarts: '4 (5m ago)' })
  })

  it('shows init progress, and an init container that failed', () => {
    const spec = { initContainers: [{ name: 'i1' }, { name: 'i2' }], containers: [{ name: 'a' }] }
    const second = pod({
      spec,
      status: {
        phase: 'Pending',
        initContainerStatuses: [
          { name: 'i1', state: { terminated: { exitCode: 0 } } },
          { name: 'i2', state: { running: {} } },
        ],
      },
    })
    assert.equal(podSummary(second, NOW).status, 'Init:1/2')
    const failed = pod({ spec, status: { initContainerStatuses: [{ name: 'i1', state: { terminated: { exitCode: 2 } } }] } })
    assert.equal(podSummary(failed, NOW).status, 'Init:ExitCode:2')
  })

  it('counts a started sidecar as a container, ready or not', () => {
    const withSidecar = pod({
      spec: { initContainers: [{ name: 'proxy', restartPolicy: 'Always' }], containers: [{ name: 'a' }] },
      status: {
        phase: 'Running',
        conditions: [{ type: 'Initialized', status: 'True' }],
        initContainerStatuses: [{ name: 'proxy', started: true, ready: true, state: { running: {} } }],
        containerStatuses: [{ name: 'a', ready: true, state: { running: {} } }],
      },
    })
    assert.deepEqual(podSummary(withSidecar, NOW), { ready: '2/2', status: 'Running', restarts: '0' })
  })

  it('shows Terminating once deleted, unless it already finished', () => {
    assert.equal(podSummary(pod({ status: { phase: 'Running' } }, { deletionTimestamp: '2024-05-01T11:59:00Z' }), NOW).status, 'Terminating')
    assert.equal(podSummary(pod({ status: { phase: 'Succeeded' } }, { deletionTimestamp: '2024-05-01T11:59:00Z' }), NOW).status, 'Succeeded')
  })

  it('shows SchedulingGated while a scheduling gate holds the pod', () => {
    const gated = pod({ status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' }] } })
    assert.equal(podSummary(gated, NOW).status, 'SchedulingGated')
  })
})

describe('service cells', () => {
  const svc = (spec: Record<string, unknown>, status: Record<string, unknown> = {}): KubeObject => ({ metadata: { name: 's' }, spec, status })

  it('formats ports with node ports and protocols', () => {
    const c = cells(services, svc({ type: 'NodePort', clusterIPs: ['10.96.0.5'], ports: [{ port: 80, nodePort: 30080, protocol: 'TCP' }, { port: 53, protocol: 'UDP' }] }))
    assert.equal(c['Port(s)'], '80:30080/TCP,53/UDP')
    assert.equal(c['Cluster-IP'], '10.96.0.5')
    assert.equal(c['External-IP'], '<none>')
  })

  it('shows <pending> for a load balancer without an address, and its ingress once it has one', () => {
    assert.equal(cells(services, svc({ type: 'LoadBalancer' }))['External-IP'], '<pending>')
    const ready = svc({ type: 'LoadBalancer', externalIPs: ['1.2.3.4'] }, { loadBalancer: { ingress: [{ ip: '5.6.7.8' }, { hostname: 'lb.example.com' }] } })
    assert.equal(cells(services, ready)['External-IP'], '5.6.7.8,lb.example.com,1.2.3.4')
    assert.equal(cells(services, svc({ type: 'ExternalName', externalName: 'db.example.com' }))['External-IP'], 'db.example.com')
  })
})

describe('other cells', () => {
  it('formats labels and selectors in key order', () => {
    assert.equal(formatLabels({ b: '2', a: '1' }), 'a=1,b=2')
    assert.equal(formatLabels(undefined), '<none>')
    assert.equal(
      formatLabelSelector({ matchLabels: { tier: 'web' }, matchExpressions: [{ key: 'env', operator: 'In', values: ['prod', 'dev'] }, { key: 'legacy', operator: 'DoesNotExist' }] }),
      'env in (dev,prod),!legacy,tier=web',
    )
    assert.equal(formatLabelSelector({}), '<none>')
  })

  it('summarizes jobs by their conditions', () => {
    const job = (status: Record<string, unknown>, spec: Record<string, unknown> = {}): KubeObject => ({ metadata: { name: 'j' }, spec, status })
    assert.equal(cells(jobs, job({ conditions: [{ type: 'Complete', status: 'True' }], succeeded: 3 }, { completions: 3 }))['Status'], 'Complete')
    assert.equal(cells(jobs, job({ succeeded: 1 }, { completions: 3 }))['Completions'], '1/3')
    assert.equal(cells(jobs, job({ succeeded: 0 }, { parallelism: 2 }))['Completions'], '0/1 of 2')
    assert.equal(cells(jobs, job({ startTime: '2024-05-01T11:58:00Z', completionTime: '2024-05-01T11:59:30Z' }))['Duration'], '90s')
  })

  it('shows nodes Ready and cordoned, with their roles', () => {
    const node: KubeObject = {
      metadata: { name: 'n', labels: { 'node-role.kubernetes.io/control-plane': '' } },
      spec: { unschedulable: true },
      status: { conditions: [{ type: 'Ready', status: 'True' }], nodeInfo: { kubeletVersion: 'v1.36.0' } },
    }
    const c = cells(nodes, node)
    assert.equal(c['Status'], 'Ready,SchedulingDisabled')
    assert.equal(c['Roles'], 'control-plane')
    assert.equal(c['Version'], 'v1.36.0')
  })

  it('names an event’s object as kind/name and counts singletons once', () => {
    const ev: KubeObject = { metadata: { name: 'e' }, involvedObject: { kind: 'Pod', name: 'web' }, lastTimestamp: '2024-05-01T11:59:00Z', message: ' pulled \n' }
    const c = cells(events, ev)
    assert.equal(c['Object'], 'pod/web')
    assert.equal(c['Last Seen'], '60s')
    assert.equal(c['Message'], 'pulled')
    assert.equal(c['Count'], 1)
  })

  it('shows the owner of an IP address', () => {
    const ip: KubeObject = { metadata: { name: '10.96.0.10' }, spec: { parentRef: { group: '', resource: 'services', namespace: 'default', name: 'dns' } } }
    assert.equal(cells(ipAddresses, ip)['ParentRef'], 'services/default/dns')
  })
})
