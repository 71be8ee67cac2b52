/**
 * `componentstatuses` as upstream computes it: each component checked when
 * read (real HTTPS health endpoints on loopback here, as a scheduler and a
 * controller manager serve them), nothing stored, an unknown name a 500.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createServer, type Server } from 'node:https'
import type { AddressInfo } from 'node:net'
import { createServer as createPlainServer } from 'node:net'
import { ADMIN_IDENTITY, createApiServer } from '../../core/index.js'
import { createCertificateAuthority, issueServingCertificate } from '../../core/pki/certificates.js'
import { httpsHealthProbe, storageClusterProbe } from '../../runtimes/node/daemon/component-probes.js'

/** A self-signed HTTPS `/healthz` answering `status` with `body`, as kube-scheduler's secure port does. */
async function healthEndpoint(status: number, body: string): Promise<{ server: Server; port: number }> {
  const ca = await createCertificateAuthority({ commonName: 'component-test-ca' })
  const serving = await issueServingCertificate(ca, { commonName: 'component', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] })
  const server = createServer({ cert: serving.certificate, key: serving.privateKey }, (req, res) => {
    res.writeHead(req.url === '/healthz' ? status : 404, { 'content-type': 'text/plain' })
    res.end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, port: (server.address() as AddressInfo).port }
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = createPlainServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as AddressInfo
  await new Promise<void>((resolve) => probe.close(() => resolve()))
  return port
}

describe('componentstatuses', () => {
  let healthy: { server: Server; port: number }
  let failing: { server: Server; port: number }
  let refused: number
  let api: ReturnType<typeof createApiServer>
  const get = (path: string, init: RequestInit = {}) => api.fetch(new Request(`http://in-process${path}`, init))

  before(async () => {
    healthy = await healthEndpoint(200, 'ok')
    failing = await healthEndpoint(500, '[-]poststarthook failed')
    refused = await closedPort()
    api = createApiServer(
      { embeddedIdentity: ADMIN_IDENTITY },
      {
        componentProbes: [
          httpsHealthProbe('scheduler', '127.0.0.1', healthy.port),
          httpsHealthProbe('controller-manager', '127.0.0.1', refused),
          httpsHealthProbe('cloud-controller', '127.0.0.1', failing.port),
          storageClusterProbe('etcd-0', async () => {}),
          storageClusterProbe('etcd-1', async () => {
            throw new Error('context deadline exceeded')
          }),
        ],
      },
    )
    await api.ready
  })
  after(async () => {
    await api.shutdown()
    healthy.server.close()
    failing.server.close()
  })

  const healthyCondition = (item: any) => item.conditions.find((c: any) => c.type === 'Healthy')

  it('lists every component with what its check found, as upstream words it', async () => {
    const res = await get('/api/v1/componentstatuses')
    assert.equal(res.status, 200)
    const list = (await res.json()) as any
    assert.equal(list.kind, 'ComponentStatusList')
    const byName = Object.fromEntries(list.items.map((i: any) => [i.metadata.name, healthyCondition(i)]))
    assert.deepEqual(Object.keys(byName).sort(), ['cloud-controller', 'controller-manager', 'etcd-0', 'etcd-1', 'scheduler'])
    assert.deepEqual(byName['scheduler'], { type: 'Healthy', status: 'True', message: 'ok' })
    assert.deepEqual(byName['etcd-0'], { type: 'Healthy', status: 'True', message: 'ok' })
    assert.deepEqual(byName['etcd-1'], { type: 'Healthy', status: 'False', error: 'context deadline exceeded' })
    assert.deepEqual(byName['cloud-controller'], { type: 'Healthy', status: 'False', message: 'HTTP probe failed with statuscode: 500' })
    assert.deepEqual(byName['controller-manager'], {
      type: 'Healthy',
      status: 'False',
      message: `Get "https://127.0.0.1:${refused}/healthz": dial tcp 127.0.0.1:${refused}: connect: connection refused`,
    })
  })

  it('gets one component, and answers an unknown name with upstream\'s internal error', async () => {
    const one = (await (await get('/api/v1/componentstatuses/scheduler')).json()) as any
    assert.equal(one.kind, 'ComponentStatus')
    assert.equal(healthyCondition(one).status, 'True')
    const missing = await get('/api/v1/componentstatuses/nope')
    assert.equal(missing.status, 500)
    assert.equal(((await missing.json()) as any).message, 'Internal error occurred: Component not found: nope')
  })

  it('filters by field and label selectors as upstream does', async () => {
    const byName = (await (await get('/api/v1/componentstatuses?fieldSelector=metadata.name%3Detcd-0')).json()) as any
    assert.deepEqual(
      byName.items.map((i: any) => i.metadata.name),
      ['etcd-0'],
    )
    const byLabel = (await (await get('/api/v1/componentstatuses?labelSelector=tier%3Dcontrol-plane')).json()) as any
    assert.deepEqual(byLabel.items, [])
  })

  it('prints the table kubectl get cs shows', async () => {
    const res = await get('/api/v1/componentstatuses', { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } })
    const table = (await res.json()) as any
    assert.deepEqual(
      table.columnDefinitions.map((c: any) => c.name),
      ['Name', 'Status', 'Message', 'Error'],
    )
    const rows = Object.fromEntries(table.rows.map((r: any) => [r.cells[0], r.cells.slice(1)]))
    assert.deepEqual(rows['scheduler'], ['Healthy', 'ok', ''])
    assert.deepEqual(rows['etcd-1'], ['Unhealthy', '', 'context deadline exceeded'])
  })

  it('stores nothing: writes and watches are refused', async () => {
    const create = await get('/api/v1/componentstatuses', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'v1', kind: 'ComponentStatus', metadata: { name: 'fake' }, conditions: [] }),
    })
    assert.equal(create.status, 405)
    const watch = await get('/api/v1/componentstatuses?watch=true')
    assert.equal(watch.status, 405)
    assert.equal((await get('/api/v1/componentstatuses/fake')).status, 500)
  })

  it('warns that v1 ComponentStatus is deprecated, as upstream does on every answer about it', async () => {
    const res = await get('/api/v1/componentstatuses/etcd-0')
    assert.equal(res.headers.get('warning'), '299 - "v1 ComponentStatus is deprecated in v1.19+"')
    // Endpoints are deprecated from 1.33 on: a 1.32 server says nothing, a 1.33 one names the replacement.
    assert.equal((await get('/api/v1/namespaces/default/endpoints')).headers.get('warning'), null)
    const newer = createApiServer({ embeddedIdentity: ADMIN_IDENTITY, version: 'v1.33.0' })
    await newer.ready
    const listed = await newer.fetch(new Request('http://in-process/api/v1/namespaces/default/endpoints'))
    assert.equal(listed.headers.get('warning'), '299 - "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"')
    await newer.shutdown()
  })

  it('is an empty list for an embedded server given no components', async () => {
    const bare = createApiServer({ embeddedIdentity: ADMIN_IDENTITY })
    await bare.ready
    const list = (await (await bare.fetch(new Request('http://in-process/api/v1/componentstatuses'))).json()) as any
    assert.deepEqual(list.items, [])
    await bare.shutdown()
  })
})
