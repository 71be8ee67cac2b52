/**
 * A small resource metrics API server for the autoscaler tests, on loopback
 * over HTTPS, as metrics-server serves it behind the aggregator:
 * `metrics.k8s.io/v1beta1` discovery and the PodMetrics of a namespace,
 * filtered by the request's labelSelector. The test sets each pod's usage
 * and labels; every request is recorded with the user the aggregator named.
 */
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:https'
import type { AddressInfo } from 'node:net'
import { parseLabelSelector } from '../../core/machinery/label-selector.js'
import { createCertificateAuthority, issueServingCertificate } from '../../core/pki/certificates.js'
import type { TestClient } from './harness.js'

export interface PodUsage {
  namespace: string
  labels: Record<string, string>
  /** Usage by resource (`cpu: '250m'`) of the pod's one container. */
  usage: Record<string, string>
}

export interface MetricsServer {
  port: number
  caBundle: string
  /** Pods by name; what the PodMetrics lists answer. */
  pods: Map<string, PodUsage>
  /** The timestamp each PodMetrics carries (the test's clock). */
  now: () => Date
  seen: { path: string; user?: string }[]
  close(): Promise<void>
}

const GV = 'metrics.k8s.io/v1beta1'
const resourceList = {
  kind: 'APIResourceList',
  apiVersion: 'v1',
  groupVersion: GV,
  resources: [
    { name: 'nodes', singularName: '', namespaced: false, kind: 'NodeMetrics', verbs: ['get', 'list'] },
    { name: 'pods', singularName: '', namespaced: true, kind: 'PodMetrics', verbs: ['get', 'list'] },
  ],
}

export async function startMetricsServer(now: () => Date): Promise<MetricsServer> {
  const ca = await createCertificateAuthority({ commonName: 'metrics-serving-ca' })
  const serving = await issueServingCertificate(ca, { commonName: 'metrics-server', dnsNames: ['metrics-server.kube-system.svc', 'localhost'], ipAddresses: ['127.0.0.1'] })
  const metrics: MetricsServer = { port: 0, caBundle: Buffer.from(ca.certificate).toString('base64'), pods: new Map(), now, seen: [], close: async () => {} }
  const server: Server = createServer({ cert: serving.certificate, key: serving.privateKey }, (req, res) => {
    const url = new URL(req.url ?? '/', 'https://metrics')
    const user = req.headers['x-remote-user']
    metrics.seen.push({ path: url.pathname + url.search, ...(typeof user === 'string' ? { user } : {}) })
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(body))
    }
    if (url.pathname === `/apis/${GV}`) return json(200, resourceList)
    const m = /^\/apis\/metrics\.k8s\.io\/v1beta1\/namespaces\/([^/]+)\/pods$/.exec(url.pathname)
    if (!m) return json(404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: 'not found' })
    const selector = parseLabelSelector(url.searchParams.get('labelSelector') ?? '')
    const at = metrics.now().toISOString().replace(/\.\d+Z$/, 'Z')
    const items = [...metrics.pods]
      .filter(([, pod]) => pod.namespace === m[1] && selector.matches(pod.labels))
      .map(([name, pod]) => ({
        metadata: { name, namespace: pod.namespace, labels: pod.labels, creationTimestamp: at },
        timestamp: at,
        window: '30s',
        containers: [{ name: 'app', usage: pod.usage }],
      }))
    json(200, { kind: 'PodMetricsList', apiVersion: GV, metadata: {}, items })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  metrics.port = (server.address() as AddressInfo).port
  metrics.close = async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
  return metrics
}

/** Registers the server as metrics-server is deployed: Service and Endpoints `kube-system/metrics-server`, APIService `v1beta1.metrics.k8s.io`. */
export async function registerMetricsServer(api: TestClient, metrics: MetricsServer): Promise<void> {
  const created = async (path: string, body: unknown): Promise<void> => {
    const r = await api.post(path, body)
    assert.equal(r.status, 201, r.text)
  }
  await created('/api/v1/namespaces/kube-system/services', { metadata: { name: 'metrics-server' }, spec: { ports: [{ name: 'https', port: 443 }] } })
  await created('/api/v1/namespaces/kube-system/endpoints', {
    metadata: { name: 'metrics-server' },
    subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: metrics.port }] }],
  })
  await created('/apis/apiregistration.k8s.io/v1/apiservices', {
    metadata: { name: 'v1beta1.metrics.k8s.io' },
    spec: { group: 'metrics.k8s.io', version: 'v1beta1', service: { namespace: 'kube-system', name: 'metrics-server', port: 443 }, caBundle: metrics.caBundle, groupPriorityMinimum: 100, versionPriority: 100 },
  })
}
