/**
 * The horizontal pod autoscaler controller (`horizontalpodautoscaling`), as
 * a user of `kubectl get hpa` / `describe hpa` sees it: without a metrics
 * API it brings the target within minReplicas and then reports the missing
 * metrics in upstream's words; with a metrics API registered as an
 * APIService, it scales a Deployment's pods up from their CPU usage.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type ApiServer, manualClock } from '../../core/index.js'
import { selectControllers } from '../../core/controllers/workloads/catalogue.js'
import type { KubeObject } from '../../core/machinery/object.js'
import { createCertificateAuthority, issueClientCertificate } from '../../core/pki/certificates.js'
import { events } from '../../core/resources/core/events.js'
import { pods } from '../../core/resources/core/pods.js'
import { deployments } from '../../core/resources/groups/apps.js'
import { horizontalPodAutoscalersV1, horizontalPodAutoscalersV2 } from '../../core/resources/groups/autoscaling.js'
import { nodeProxyTransport, type NodeProxyTransport } from '../../runtimes/node/daemon/proxy-transport.js'
import { createTestServer, TestClient, untilPasses } from './harness.js'
import { type MetricsServer, registerMetricsServer, startMetricsServer } from './metrics-apiserver.js'

const NS = 'default'
const START = Date.parse('2026-03-01T10:00:00Z')
const HPA_ACCOUNT = 'system:serviceaccount:kube-system:horizontal-pod-autoscaler'

function deployment(name: string, replicas: number): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: NS },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu: '100m' } } }] },
      },
    },
  }
}

function hpa(name: string, target: string, minReplicas: number, maxReplicas: number): KubeObject {
  return {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name, namespace: NS },
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: target },
      minReplicas,
      maxReplicas,
      metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }],
    },
  }
}

type Conditions = { type: string; status: string; reason: string; message: string }[]
const conditionsOf = (h: KubeObject) => ((h['status'] as { conditions?: Conditions } | undefined)?.conditions ?? []).map(({ type, status, reason, message }) => ({ type, status, reason, message }))

async function eventsAbout(server: ApiServer, name: string): Promise<{ type: string; reason: string; message: string; source: string }[]> {
  const list = await server.client.list(events, NS, { fieldSelector: `involvedObject.kind=HorizontalPodAutoscaler,involvedObject.name=${name}` })
  return list.items.map((e) => ({
    type: String(e['type']),
    reason: String(e['reason']),
    message: String(e['message']),
    source: String((e['source'] as { component?: string }).component),
  }))
}

const MISSING_API =
  'failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: the server could not find the requested resource (get pods.metrics.k8s.io)'

describe('horizontalpodautoscaling controller without a metrics API (RBAC)', () => {
  const clock = manualClock(START)
  let server: ApiServer
  before(async () => {
    server = createTestServer({ controllers: ['horizontalpodautoscaling'], authorizationModes: ['RBAC'] }, { now: clock.now })
    await server.ready
  })
  after(() => server.shutdown())

  it('is off under `*` and runs when named', () => {
    assert.ok(!selectControllers(['*']).some((c) => c.name === 'horizontalpodautoscaling'))
    assert.ok(selectControllers(['*', 'horizontalpodautoscaling']).some((c) => c.name === 'horizontalpodautoscaling'))
  })

  it('scales the target up to minReplicas at once, then reports the missing metrics API as upstream does', async () => {
    await server.client.create(deployments, NS, deployment('web', 1))
    await server.client.create(horizontalPodAutoscalersV2, NS, hpa('web', 'web', 2, 5))

    await untilPasses(async () => {
      const scaled = await server.client.get(deployments, NS, 'web')
      assert.equal((scaled['spec'] as { replicas: number }).replicas, 2)
      const h = await server.client.get(horizontalPodAutoscalersV2, NS, 'web')
      const status = h['status'] as Record<string, unknown>
      assert.equal(status['currentReplicas'], 1)
      assert.equal(status['desiredReplicas'], 2)
      assert.equal(status['lastScaleTime'], '2026-03-01T10:00:00Z')
      // 1.32's HPAs carry no generation (HPAGeneration came later), so its controller writes no observedGeneration.
      assert.equal(status['observedGeneration'], undefined)
      assert.deepEqual(conditionsOf(h), [
        { type: 'AbleToScale', status: 'True', reason: 'SucceededRescale', message: 'the HPA controller was able to update the target scale to 2' },
      ])
    })
    assert.deepEqual(await eventsAbout(server, 'web'), [
      { type: 'Normal', reason: 'SuccessfulRescale', message: 'New size: 2; reason: Current number of replicas below Spec.MinReplicas', source: 'horizontal-pod-autoscaler' },
    ])

    // The next sync, a period later, reads the metrics: none are served.
    clock.advance(15_000)
    await untilPasses(async () => {
      const h = await server.client.get(horizontalPodAutoscalersV2, NS, 'web')
      assert.deepEqual(conditionsOf(h), [
        { type: 'AbleToScale', status: 'True', reason: 'SucceededGetScale', message: "the HPA controller was able to get the target's current scale" },
        { type: 'ScalingActive', status: 'False', reason: 'FailedGetResourceMetric', message: `the HPA was unable to compute the replica count: ${MISSING_API}` },
      ])
      const status = h['status'] as Record<string, unknown>
      assert.equal(status['currentReplicas'], 2)
      assert.equal(status['desiredReplicas'], 2)
      const reasons = (await eventsAbout(server, 'web')).map((e) => `${e.type} ${e.reason}: ${e.message}`)
      assert.ok(reasons.includes(`Warning FailedGetResourceMetric: ${MISSING_API}`), reasons.join('\n'))
      assert.ok(reasons.includes(`Warning FailedComputeMetricsReplicas: invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: ${MISSING_API}`), reasons.join('\n'))
    })
    // autoscaling/v1 shows the same object.
    const v1 = await server.client.get(horizontalPodAutoscalersV1, NS, 'web')
    assert.deepEqual(
      { current: (v1['status'] as { currentReplicas?: number }).currentReplicas, desired: (v1['status'] as { desiredReplicas?: number }).desiredReplicas },
      { current: 2, desired: 2 },
    )
  })

  it('reports a target it cannot find with FailedGetScale', async () => {
    await server.client.create(horizontalPodAutoscalersV2, NS, hpa('ghost', 'nope', 1, 3))
    await untilPasses(async () => {
      const h = await server.client.get(horizontalPodAutoscalersV2, NS, 'ghost')
      assert.deepEqual(conditionsOf(h), [
        { type: 'AbleToScale', status: 'False', reason: 'FailedGetScale', message: 'the HPA controller was unable to get the target\'s current scale: deployments/scale.apps "nope" not found' },
      ])
      assert.deepEqual(await eventsAbout(server, 'ghost'), [{ type: 'Warning', reason: 'FailedGetScale', message: 'deployments/scale.apps "nope" not found', source: 'horizontal-pod-autoscaler' }])
    })
  })
})

describe('horizontalpodautoscaling controller with a metrics API behind the aggregator', () => {
  const clock = manualClock(START)
  let server: ApiServer
  let api: TestClient
  let metrics: MetricsServer
  let transport: NodeProxyTransport

  before(async () => {
    metrics = await startMetricsServer(clock.now)
    const proxyCA = await createCertificateAuthority({ commonName: 'front-proxy-ca' })
    const proxyClient = await issueClientCertificate(proxyCA, { commonName: 'front-proxy-client', organizations: [] })
    transport = nodeProxyTransport()
    server = createTestServer(
      {
        controllers: ['deployment', 'replicaset', 'horizontalpodautoscaling'],
        nodes: 2,
        authorizationModes: ['RBAC'],
        aggregation: {
          enableAggregatorRouting: true,
          proxyClientCertificate: { certificate: proxyClient.certificate, key: proxyClient.privateKey },
          availabilityIntervalMs: 200,
        },
      },
      { now: clock.now, proxyTransport: transport },
    )
    await server.ready
    api = new TestClient(server)
    await registerMetricsServer(api, metrics)
    await untilPasses(async () => {
      const r = await api.get('/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.k8s.io')
      assert.ok(r.body.status?.conditions?.some((c: { type: string; status: string }) => c.type === 'Available' && c.status === 'True'), r.text)
    })
  })
  after(async () => {
    await server?.shutdown()
    transport?.close()
    await metrics?.close()
  })

  it('scales a Deployment up from its pods\' CPU usage, within the scale-up limit, and reports the metrics', async () => {
    await server.client.create(deployments, NS, deployment('busy', 2))
    let running: KubeObject[] = []
    await untilPasses(async () => {
      running = (await server.client.list(pods, NS, { labelSelector: 'app=busy' })).items
      assert.equal(running.length, 2)
      for (const pod of running) assert.equal((pod['status'] as { phase?: string }).phase, 'Running')
    })
    // A minute on, the samples postdate the pods' readiness by more than their window.
    clock.advance(60_000)
    for (const pod of running) metrics.pods.set(pod.metadata.name ?? '', { namespace: NS, labels: pod.metadata.labels ?? {}, usage: { cpu: '250m' } })

    await server.client.create(horizontalPodAutoscalersV2, NS, hpa('busy', 'busy', 1, 6))
    await untilPasses(async () => {
      const h = await server.client.get(horizontalPodAutoscalersV2, NS, 'busy')
      const status = h['status'] as Record<string, unknown>
      assert.deepEqual(status['currentMetrics'], [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 250, averageValue: '250m' } } }])
      assert.equal(status['currentReplicas'], 2)
      // 250 % of a 50 % target asks for 10 pods; from 2, one sync may go to 4 at most.
      assert.equal(status['desiredReplicas'], 4)
      assert.deepEqual(conditionsOf(h), [
        { type: 'AbleToScale', status: 'True', reason: 'SucceededRescale', message: 'the HPA controller was able to update the target scale to 4' },
        { type: 'ScalingActive', status: 'True', reason: 'ValidMetricFound', message: 'the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)' },
        { type: 'ScalingLimited', status: 'True', reason: 'ScaleUpLimit', message: 'the desired replica count is increasing faster than the maximum scale rate' },
      ])
    })
    assert.equal(((await server.client.get(deployments, NS, 'busy'))['spec'] as { replicas: number }).replicas, 4)
    assert.deepEqual(await eventsAbout(server, 'busy'), [
      { type: 'Normal', reason: 'SuccessfulRescale', message: 'New size: 4; reason: cpu resource utilization (percentage of request) above target', source: 'horizontal-pod-autoscaler' },
    ])
    // The metrics server was asked through the aggregator, as the controller's service account, for the target's pods.
    const asked = metrics.seen.find((s) => s.path.startsWith('/apis/metrics.k8s.io/v1beta1/namespaces/default/pods'))
    assert.deepEqual(asked, { path: '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=app%3Dbusy', user: HPA_ACCOUNT })
    await untilPasses(async () => assert.equal((await server.client.list(pods, NS, { labelSelector: 'app=busy' })).items.length, 4))
  })
})
