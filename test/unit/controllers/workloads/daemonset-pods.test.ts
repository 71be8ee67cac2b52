/**
 * What the DaemonSet controller decides about nodes and pods without a
 * server: which nodes should run a pod and which may keep one, the daemon
 * tolerations, the pin to a node, and the failed-pod back-off.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../../../core/machinery/object.js'
import {
  addDaemonTolerations,
  daemonPodTemplate,
  FailedPodBackoff,
  isPodUpdated,
  nodeShouldRunDaemonPod,
  pinnedToNode,
  surgeCount,
  targetNodeName,
  unavailableCount,
} from '../../../../core/controllers/workloads/daemonset-pods.js'
import { matchesNodeAffinity } from '../../../../core/controllers/workloads/node-fit.js'

const node = (name: string, labels: Record<string, string> = {}, taints: unknown[] = []): KubeObject => ({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels }, spec: { taints } })
const ds = (podSpec: Record<string, unknown> = {}, spec: Record<string, unknown> = {}, annotations?: Record<string, string>): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'DaemonSet',
  metadata: { name: 'd', namespace: 'default', ...(annotations ? { annotations } : {}) },
  spec: { selector: { matchLabels: { app: 'd' } }, template: { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'c', image: 'i' }], ...podSpec } }, ...spec },
})

describe('nodeShouldRunDaemonPod', () => {
  it('follows the nodeSelector, node affinity and the template nodeName', () => {
    assert.deepEqual(nodeShouldRunDaemonPod(node('a', { disk: 'ssd' }), ds({ nodeSelector: { disk: 'ssd' } })), { shouldRun: true, shouldContinueRunning: true })
    assert.deepEqual(nodeShouldRunDaemonPod(node('a'), ds({ nodeSelector: { disk: 'ssd' } })), { shouldRun: false, shouldContinueRunning: false })
    const affinity = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['z1'] }] }] } } }
    assert.equal(nodeShouldRunDaemonPod(node('a', { zone: 'z2' }), ds({ affinity })).shouldRun, true)
    assert.equal(nodeShouldRunDaemonPod(node('a', { zone: 'z1' }), ds({ affinity })).shouldRun, false)
    assert.equal(nodeShouldRunDaemonPod(node('b'), ds({ nodeName: 'a' })).shouldRun, false)
  })

  it('keeps new pods off a NoSchedule taint but lets one there stay; a NoExecute taint evicts', () => {
    assert.deepEqual(nodeShouldRunDaemonPod(node('a', {}, [{ key: 'k', effect: 'NoSchedule' }]), ds()), { shouldRun: false, shouldContinueRunning: true })
    assert.deepEqual(nodeShouldRunDaemonPod(node('a', {}, [{ key: 'k', effect: 'NoExecute' }]), ds()), { shouldRun: false, shouldContinueRunning: false })
    assert.deepEqual(nodeShouldRunDaemonPod(node('a', {}, [{ key: 'k', value: 'v', effect: 'NoExecute' }]), ds({ tolerations: [{ key: 'k', value: 'v', operator: 'Equal' }] })), {
      shouldRun: true,
      shouldContinueRunning: true,
    })
    // The daemon tolerations: a cordoned or not-ready node keeps its pod.
    assert.equal(nodeShouldRunDaemonPod(node('a', {}, [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }]), ds()).shouldRun, true)
    assert.equal(nodeShouldRunDaemonPod(node('a', {}, [{ key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' }]), ds()).shouldContinueRunning, true)
    assert.equal(nodeShouldRunDaemonPod(node('a', {}, [{ key: 'node.kubernetes.io/network-unavailable', effect: 'NoSchedule' }]), ds()).shouldRun, false)
    assert.equal(nodeShouldRunDaemonPod(node('a', {}, [{ key: 'node.kubernetes.io/network-unavailable', effect: 'NoSchedule' }]), ds({ hostNetwork: true })).shouldRun, true)
  })
})

describe('daemon pods', () => {
  it('adds the daemon tolerations once, replacing an equal one', () => {
    const spec: Record<string, unknown> = { tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 }] }
    addDaemonTolerations(spec)
    const tolerations = spec['tolerations'] as Array<Record<string, unknown>>
    assert.equal(tolerations.length, 6)
    assert.deepEqual(tolerations[0], { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' })
  })

  it('pins a pod to its node by a single matchFields term and reads the node back', () => {
    const spec = pinnedToNode({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'x', operator: 'Exists' }] }] } }, podAffinity: {} } }, 'n1')
    assert.deepEqual(spec['affinity'], {
      nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }] } },
      podAffinity: {},
    })
    const pod: KubeObject = { metadata: { name: 'p' }, spec }
    assert.equal(targetNodeName(pod), 'n1')
    assert.equal(targetNodeName({ ...pod, spec: { ...spec, nodeName: 'n2' } }), 'n2')
    assert.equal(targetNodeName({ metadata: { name: 'p' }, spec: {} }), undefined)
    assert.equal(matchesNodeAffinity(spec, node('n1')), true)
    assert.equal(matchesNodeAffinity(spec, node('n2')), false)
  })

  it('labels the template with the revision hash and generation, and tells updated pods by either', () => {
    const template = daemonPodTemplate(ds({}, {}, { 'deprecated.daemonset.template.generation': '4' }), 'abc')
    assert.deepEqual(template.metadata?.labels, { app: 'd', 'pod-template-generation': '4', 'controller-revision-hash': 'abc' })
    const pod = (labels: Record<string, string>): KubeObject => ({ metadata: { name: 'p', labels } })
    assert.equal(isPodUpdated(pod({ 'controller-revision-hash': 'abc' }), 'abc', 9), true)
    assert.equal(isPodUpdated(pod({ 'pod-template-generation': '9' }), 'abc', 9), true)
    assert.equal(isPodUpdated(pod({ 'controller-revision-hash': 'old', 'pod-template-generation': '3' }), 'abc', 9), false)
  })

  it('reads maxUnavailable and maxSurge as counts or percentages rounded up', () => {
    const rolling = (rollingUpdate: Record<string, unknown>) => ds({}, { updateStrategy: { type: 'RollingUpdate', rollingUpdate } })
    assert.equal(unavailableCount(rolling({ maxUnavailable: '10%' }), 15), 2)
    assert.equal(surgeCount(rolling({ maxUnavailable: 0, maxSurge: '50%' }), 3), 2)
    assert.equal(unavailableCount(ds({}, { updateStrategy: { type: 'OnDelete' } }), 10), 0)
  })
})

describe('FailedPodBackoff', () => {
  it('acts on the first failure at once, then waits 1 s, doubling', () => {
    const backoff = new FailedPodBackoff()
    assert.equal(backoff.remainingMs('k', 0), 0)
    backoff.next('k', 0)
    assert.equal(backoff.remainingMs('k', 400), 600)
    assert.equal(backoff.remainingMs('k', 1000), 0)
    backoff.next('k', 1000)
    assert.equal(backoff.delayMs('k'), 2000)
    assert.equal(backoff.remainingMs('k', 2500), 500)
  })
})
