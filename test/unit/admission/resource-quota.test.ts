/** ResourceQuota's arithmetic, evaluators, scopes and admission decisions, without a server. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { type QuotaAccess, resourceQuotaAdmission } from '../../../core/admission/quota/admission.js'
import { evaluatorFor, podEvaluator, pvcEvaluator, serviceEvaluator } from '../../../core/quota/evaluators.js'
import { formatAmount, formatResourceList, parseAmount, prettyPrint, parseResourceList, add } from '../../../core/quota/resource-list.js'
import { podMatchesScope } from '../../../core/quota/scopes.js'
import type { AdmissionAttributes } from '../../../core/admission/attributes.js'
import { StatusError } from '../../../core/machinery/status-error.js'
import type { ResourceEntry } from '../../../core/resources/catalogue.js'
import type { KubeObject } from '../../../core/machinery/object.js'

const NOW = new Date('2026-01-01T00:00:00Z')
const format = (list: ReturnType<typeof parseResourceList>) => formatResourceList(list)

function pod(containers: Record<string, unknown>[], spec: Record<string, unknown> = {}, extra: Partial<KubeObject> = {}): KubeObject {
  return { metadata: { name: 'p', namespace: 'ns' }, spec: { containers, ...spec }, ...extra }
}
const c = (name: string, requests?: Record<string, string>, limits?: Record<string, string>) => ({ name, image: 'x', resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) } })

describe('quota amounts', () => {
  const cases: [string, string][] = [
    ['500m', '500m'],
    ['0.5', '500m'],
    ['1000m', '1'],
    ['2048Ki', '2Mi'],
    ['1536Mi', '1536Mi'],
    ['100', '100'],
    ['1e3', '1e3'],
    ['1.5Gi', '1536Mi'],
  ]
  for (const [input, printed] of cases) it(`prints ${input} as ${printed}`, () => assert.equal(formatAmount(parseAmount(input)!), printed))

  it('adds keeping the first non-zero format, and prints lists as upstream', () => {
    const sum = add(parseResourceList({ memory: '0', cpu: '1' }), parseResourceList({ memory: '512Mi', cpu: '500m' }))
    assert.deepEqual(format(sum), { memory: '512Mi', cpu: '1500m' })
    assert.equal(prettyPrint(sum), 'cpu=1500m,memory=512Mi')
  })
})

describe('quota evaluators', () => {
  it('counts a pod: requests and limits, init containers at their peak, sidecars added, overhead', () => {
    const p = pod([c('a', { cpu: '100m', memory: '64Mi' }, { cpu: '200m' }), c('b', { cpu: '100m' })], {
      initContainers: [c('init', { cpu: '1' }), { ...c('side', { cpu: '50m' }), restartPolicy: 'Always' }],
      overhead: { cpu: '10m' },
    })
    assert.deepEqual(format(podEvaluator.usage(p, NOW)), {
      'count/pods': '1',
      pods: '1',
      cpu: '1010m',
      'requests.cpu': '1010m',
      'limits.cpu': '210m',
      memory: '64Mi',
      'requests.memory': '64Mi',
    })
  })

  it('counts extended resources and hugepages as requests, and a finished pod only as an object', () => {
    const gpu = pod([c('a', { 'example.com/gpu': '2', 'hugepages-2Mi': '4Mi' })])
    const usage = format(podEvaluator.usage(gpu, NOW))
    assert.equal(usage['requests.example.com/gpu'], '2')
    assert.equal(usage['requests.hugepages-2Mi'], '4Mi')
    assert.deepEqual(format(podEvaluator.usage({ ...gpu, status: { phase: 'Succeeded' } }, NOW)), { 'count/pods': '1' })
    assert.deepEqual(podEvaluator.matchingResources(['requests.example.com/gpu', 'limits.example.com/gpu', 'pods', 'secrets']), [
      'requests.example.com/gpu',
      'pods',
    ])
  })

  it('counts a resized container at the larger of its spec and what its node reports, until the resize is actuated', () => {
    const running = (resources: Record<string, unknown>, conditions: unknown[] = []) => ({
      phase: 'Running',
      conditions,
      containerStatuses: [{ name: 'a', allocatedResources: { cpu: '300m' }, resources }],
    })
    const shrunk = pod([c('a', { cpu: '100m', memory: '64Mi' }, { cpu: '200m' })])
    const held = { requests: { cpu: '250m', memory: '32Mi' }, limits: { cpu: '500m' } }
    const usage = format(podEvaluator.usage({ ...shrunk, status: running(held) }, NOW))
    assert.deepEqual([usage['requests.cpu'], usage['requests.memory'], usage['limits.cpu']], ['300m', '64Mi', '500m'])
    // An infeasible resize counts only what the node holds.
    const infeasible = running(held, [{ type: 'PodResizePending', status: 'True', reason: 'Infeasible' }])
    const stuck = format(podEvaluator.usage({ ...shrunk, status: infeasible }, NOW))
    assert.deepEqual([stuck['requests.cpu'], stuck['requests.memory'], stuck['limits.cpu']], ['300m', '32Mi', '500m'])
  })

  it('counts a pod by its pod-level cpu and memory when it states them', () => {
    const p = pod([c('a', { cpu: '100m', 'ephemeral-storage': '1Gi' }), c('b', { cpu: '100m' })], { resources: { requests: { cpu: '1' }, limits: { memory: '1Gi' } } })
    const usage = format(podEvaluator.usage(p, NOW))
    assert.deepEqual([usage['requests.cpu'], usage['limits.memory'], usage['requests.ephemeral-storage']], ['1', '1Gi', '1Gi'])
  })

  it('handles a pod resize as an update, and no other pod subresource', () => {
    assert.equal(podEvaluator.handles('UPDATE', 'resize'), true)
    assert.equal(podEvaluator.handles('CREATE', undefined), true)
    assert.equal(podEvaluator.handles('UPDATE', undefined), false)
    assert.equal(podEvaluator.handles('UPDATE', 'status'), false)
  })

  it('names every container that leaves out a constrained cpu or memory', () => {
    const p = pod([c('a', { cpu: '1' }), c('b')], { initContainers: [c('i', undefined, { memory: '1Gi' })] })
    assert.equal(
      podEvaluator.constraints(['requests.cpu', 'limits.memory', 'pods'], p),
      'must specify limits.memory for: a,b; must specify requests.cpu for: b,i',
    )
    assert.equal(podEvaluator.constraints(['pods', 'requests.storage'], p), undefined)
  })

  const services: [string, Record<string, unknown>, Record<string, string>][] = [
    ['ClusterIP', { ports: [{ port: 80 }] }, { services: '1', 'count/services': '1' }],
    ['NodePort', { type: 'NodePort', ports: [{ port: 80 }, { port: 81 }] }, { services: '1', 'count/services': '1', 'services.nodeports': '2' }],
    [
      'LoadBalancer without node ports',
      { type: 'LoadBalancer', allocateLoadBalancerNodePorts: false, ports: [{ port: 80, nodePort: 30000 }, { port: 81 }] },
      { services: '1', 'count/services': '1', 'services.nodeports': '1', 'services.loadbalancers': '1' },
    ],
  ]
  for (const [what, spec, usage] of services)
    it(`counts a ${what} service`, () => assert.deepEqual(format(serviceEvaluator.usage({ metadata: {}, spec }, NOW)), usage))

  it('counts a claim per storage class, and any other resource as an object', () => {
    const claim = { metadata: {}, spec: { storageClassName: 'fast', resources: { requests: { storage: '10Gi' } } } }
    assert.deepEqual(format(pvcEvaluator.usage(claim, NOW)), {
      persistentvolumeclaims: '1',
      'count/persistentvolumeclaims': '1',
      'fast.storageclass.storage.k8s.io/persistentvolumeclaims': '1',
      'requests.storage': '10Gi',
      'fast.storageclass.storage.k8s.io/requests.storage': '10Gi',
    })
    const deployments = evaluatorFor('apps', 'deployments')
    assert.deepEqual(format(deployments.usage({ metadata: {} }, NOW)), { 'count/deployments.apps': '1' })
    assert.deepEqual(format(evaluatorFor('', 'configmaps').usage({ metadata: {} }, NOW)), { 'count/configmaps': '1', configmaps: '1' })
  })
})

describe('quota scopes', () => {
  const cases: [string, string, string[], KubeObject, boolean][] = [
    ['Terminating', 'Exists', [], pod([c('a')], { activeDeadlineSeconds: 10 }), true],
    ['NotTerminating', 'Exists', [], pod([c('a')], { activeDeadlineSeconds: 10 }), false],
    ['BestEffort', 'Exists', [], pod([c('a')]), true],
    ['BestEffort', 'Exists', [], pod([c('a', { cpu: '1' })]), false],
    ['NotBestEffort', 'Exists', [], pod([c('a', { cpu: '1' })]), true],
    ['PriorityClass', 'In', ['high'], pod([c('a')], { priorityClassName: 'high' }), true],
    ['PriorityClass', 'NotIn', ['high'], pod([c('a')], { priorityClassName: 'low' }), true],
    ['PriorityClass', 'Exists', [], pod([c('a')]), false],
  ]
  for (const [scopeName, operator, values, p, expected] of cases)
    it(`${scopeName} ${operator} ${values.join(',')} ${expected ? 'selects' : 'skips'} the pod`, () =>
      assert.equal(podMatchesScope({ scopeName, operator, values }, p), expected))
})

describe('quota admission decisions', () => {
  const pods = { group: '', resource: 'pods', namespaced: true } as ResourceEntry
  const quota = (hard: Record<string, string>, used: Record<string, string>, spec: Record<string, unknown> = {}): KubeObject => ({
    metadata: { name: 'q', namespace: 'ns', resourceVersion: '1' },
    spec: { hard, ...spec },
    status: { hard, used },
  })
  function accessTo(stored: KubeObject[]): QuotaAccess & { writes: KubeObject[] } {
    const writes: KubeObject[] = []
    return {
      writes,
      quotas: () => stored,
      async updateQuota(_ns, name, change) {
        const i = stored.findIndex((q) => q.metadata.name === name)
        const next = change(stored[i] as KubeObject)
        stored[i] = next
        writes.push(next)
        return next
      },
    }
  }
  const attrs = (object: KubeObject, dryRun = false): AdmissionAttributes => ({
    operation: 'CREATE',
    entry: pods,
    namespace: 'ns',
    name: 'p',
    object,
    dryRun,
    user: { username: 'u', groups: [] },
    warnings: [],
  })
  const refusal = async (p: void | Promise<void>): Promise<string> => {
    try {
      await p
    } catch (err) {
      assert.ok(err instanceof StatusError)
      assert.equal(err.code, 403)
      return err.message
    }
    return 'admitted'
  }

  it('charges an admitted pod and refuses the one past hard', async () => {
    const access = accessTo([quota({ pods: '2', 'limits.cpu': '1' }, { pods: '1', 'limits.cpu': '500m' })])
    const plugin = resourceQuotaAdmission(access, { limitedResources: [] }, () => NOW)
    await plugin.validate(attrs(pod([c('a', undefined, { cpu: '250m' })])))
    assert.deepEqual(access.writes.at(-1)?.['status'], { hard: { pods: '2', 'limits.cpu': '1' }, used: { pods: '2', 'limits.cpu': '750m' } })
    assert.equal(
      await refusal(plugin.validate(attrs(pod([c('a', undefined, { cpu: '250m' })])))),
      'pods "p" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2',
    )
  })

  it('refuses against a quota not yet counted, and charges nothing on a dry run', async () => {
    const uncounted = accessTo([quota({ pods: '2' }, {})])
    const plugin = resourceQuotaAdmission(uncounted, { limitedResources: [] }, () => NOW)
    assert.equal(await refusal(plugin.validate(attrs(pod([c('a')])))), 'pods "p" is forbidden: status unknown for quota: q, resources: pods')
    const counted = accessTo([quota({ pods: '2' }, { pods: '0' })])
    await resourceQuotaAdmission(counted, { limitedResources: [] }, () => NOW).validate(attrs(pod([c('a')]), true))
    assert.equal(counted.writes.length, 0)
  })
})
