import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { type ApiServerOptions } from '../../core/index.js'
import { MemoryStorage } from '../../core/storage/memory.js'
import { silentLogger } from '../../core/logging/logger.js'
import { createTestServer, startServer, TestClient } from './harness.js'

const SVCS = '/api/v1/namespaces/default/services'

const clusterIPService = (name: string, spec: Record<string, unknown> = {}) => ({
  metadata: { name },
  spec: { ports: [{ port: 80 }], selector: { app: name }, ...spec },
})

async function eventually<T>(read: () => Promise<T>, ok: (value: T) => boolean): Promise<T> {
  for (;;) {
    const value = await read()
    if (ok(value)) return value
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

async function serverOn(storage: MemoryStorage, options: ApiServerOptions = {}): Promise<TestClient> {
  const server = createTestServer({ securePort: 6443, ...options }, { storage })
  await server.ready
  return new TestClient(server)
}

describe('services: cluster IPs', () => {
  it('gives a new service a cluster IP from the range and fills the defaults', async () => {
    const client = await startServer({ serviceClusterIPRange: ['10.96.0.0/24'] })
    const res = await client.post(SVCS, clusterIPService('web'))
    assert.equal(res.status, 201, res.text)
    const spec = res.body.spec
    assert.match(spec.clusterIP, /^10\.96\.0\.\d+$/)
    assert.notEqual(spec.clusterIP, '10.96.0.1', 'the first address is the kubernetes service’s')
    assert.deepEqual(spec.clusterIPs, [spec.clusterIP])
    assert.equal(spec.type, 'ClusterIP')
    assert.equal(spec.sessionAffinity, 'None')
    assert.equal(spec.ipFamilyPolicy, 'SingleStack')
    assert.deepEqual(spec.ipFamilies, ['IPv4'])
    assert.equal(spec.internalTrafficPolicy, 'Cluster')
    assert.deepEqual(spec.ports, [{ port: 80, protocol: 'TCP', targetPort: 80 }])
    const read = await client.get(`${SVCS}/web`)
    assert.equal(read.body.spec.clusterIP, spec.clusterIP)
  })

  it('gives a requested free IP, and refuses a taken one with 422 and stores nothing', async () => {
    const client = await startServer()
    assert.equal((await client.post(SVCS, clusterIPService('a', { clusterIP: '10.0.0.5' }))).body.spec.clusterIP, '10.0.0.5')
    const taken = await client.post(SVCS, clusterIPService('b', { clusterIP: '10.0.0.5' }))
    assert.equal(taken.status, 422)
    assert.equal(
      taken.body.message,
      'Service "b" is invalid: spec.clusterIPs: Invalid value: []string{"10.0.0.5"}: failed to allocate IP 10.0.0.5: provided IP is already allocated',
    )
    assert.equal((await client.get(`${SVCS}/b`)).status, 404)
    const outside = await client.post(SVCS, clusterIPService('c', { clusterIP: '10.1.0.5' }))
    assert.equal(outside.status, 422)
    assert.equal(
      outside.body.message,
      'Service "c" is invalid: spec.clusterIPs: Invalid value: []string{"10.1.0.5"}: failed to allocate IP 10.1.0.5: the provided IP (10.1.0.5) is not in the valid range. The range of valid IPs is 10.0.0.0/24',
    )
  })

  it('gives the IP back when the service is deleted', async () => {
    const client = await startServer()
    await client.post(SVCS, clusterIPService('a', { clusterIP: '10.0.0.7' }))
    assert.equal((await client.delete(`${SVCS}/a`)).status, 200)
    const again = await client.post(SVCS, clusterIPService('b', { clusterIP: '10.0.0.7' }))
    assert.equal(again.status, 201, again.text)
  })

  it('does not keep the IP of a create that failed for another reason', async () => {
    const client = await startServer()
    await client.post(SVCS, clusterIPService('a', { clusterIP: '10.0.0.8' }))
    const exists = await client.post(SVCS, clusterIPService('a', { clusterIP: '10.0.0.9' }))
    assert.equal(exists.status, 409)
    assert.equal((await client.post(SVCS, clusterIPService('b', { clusterIP: '10.0.0.9' }))).status, 201)
  })

  it('keeps the cluster IP on update and refuses to change it', async () => {
    const client = await startServer()
    const created = (await client.post(SVCS, clusterIPService('a', { clusterIP: '10.0.0.20' }))).body
    // A replace of the original manifest (no clusterIP) keeps the allocated one.
    const replaced = await client.put(`${SVCS}/a`, { ...clusterIPService('a'), metadata: { name: 'a', resourceVersion: created.metadata.resourceVersion } })
    assert.equal(replaced.status, 200, replaced.text)
    assert.equal(replaced.body.spec.clusterIP, '10.0.0.20')
    const changed = await client.put(`${SVCS}/a`, { ...replaced.body, spec: { ...replaced.body.spec, clusterIP: '10.0.0.21', clusterIPs: ['10.0.0.21'] } })
    assert.equal(changed.status, 422)
    assert.equal(changed.body.message, 'Service "a" is invalid: spec.clusterIPs[0]: Invalid value: []string{"10.0.0.21"}: may not change once set')
  })

  it('a headless service gets no IP; an ExternalName one none and no families', async () => {
    const client = await startServer()
    const headless = await client.post(SVCS, clusterIPService('h', { clusterIP: 'None' }))
    assert.equal(headless.status, 201, headless.text)
    assert.deepEqual(headless.body.spec.clusterIPs, ['None'])
    const ext = await client.post(SVCS, { metadata: { name: 'x' }, spec: { type: 'ExternalName', externalName: 'example.com' } })
    assert.equal(ext.status, 201, ext.text)
    assert.equal(ext.body.spec.clusterIP, undefined)
    assert.equal(ext.body.spec.ipFamilies, undefined)
  })

  it('gives the IP back on a change to ExternalName, and takes one on the way back', async () => {
    const client = await startServer()
    const created = (await client.post(SVCS, clusterIPService('a', { clusterIP: '10.0.0.40' }))).body
    const external = await client.put(`${SVCS}/a`, { ...created, spec: { ...created.spec, type: 'ExternalName', externalName: 'example.com' } })
    assert.equal(external.status, 200, external.text)
    assert.equal(external.body.spec.clusterIP, undefined)
    assert.equal((await client.post(SVCS, clusterIPService('b', { clusterIP: '10.0.0.40' }))).status, 201)
    const back = await client.put(`${SVCS}/a`, { ...external.body, spec: { ...external.body.spec, type: 'ClusterIP', externalName: undefined } })
    assert.equal(back.status, 200, back.text)
    assert.match(back.body.spec.clusterIP, /^10\.0\.0\.\d+$/)
    assert.notEqual(back.body.spec.clusterIP, '10.0.0.40')
  })

  it('dual stack: PreferDualStack gets one address of each family', async () => {
    const client = await startServer({ serviceClusterIPRange: ['10.0.0.0/24', 'fd00::/108'] })
    const res = await client.post(SVCS, clusterIPService('d', { ipFamilyPolicy: 'PreferDualStack' }))
    assert.equal(res.status, 201, res.text)
    assert.deepEqual(res.body.spec.ipFamilies, ['IPv4', 'IPv6'])
    assert.match(res.body.spec.clusterIPs[1], /^fd00::/)
  })
})

describe('services: node ports', () => {
  it('gives each port of a NodePort service a node port in the range', async () => {
    const client = await startServer({ serviceNodePortRange: { first: 31000, last: 31010 } })
    const res = await client.post(SVCS, clusterIPService('np', { type: 'NodePort', ports: [{ name: 'a', port: 80 }, { name: 'b', port: 81 }] }))
    assert.equal(res.status, 201, res.text)
    for (const port of res.body.spec.ports) assert.ok(port.nodePort >= 31000 && port.nodePort <= 31010, String(port.nodePort))
    assert.equal(res.body.spec.externalTrafficPolicy, 'Cluster')
  })

  it('refuses a taken or out-of-range node port, and frees ports on a change to ClusterIP', async () => {
    const client = await startServer()
    const first = await client.post(SVCS, clusterIPService('a', { type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] }))
    assert.equal(first.status, 201, first.text)
    const taken = await client.post(SVCS, clusterIPService('b', { type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] }))
    assert.equal(taken.status, 422)
    assert.equal(taken.body.message, 'Service "b" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated')
    const outside = await client.post(SVCS, clusterIPService('c', { type: 'NodePort', ports: [{ port: 80, nodePort: 8080 }] }))
    assert.equal(
      outside.body.message,
      'Service "c" is invalid: spec.ports[0].nodePort: Invalid value: 8080: provided port is not in the valid range. The range of valid ports is 30000-32767',
    )
    const toClusterIP = await client.put(`${SVCS}/a`, { ...first.body, spec: { ...first.body.spec, type: 'ClusterIP' } })
    assert.equal(toClusterIP.status, 200, toClusterIP.text)
    assert.equal(toClusterIP.body.spec.ports[0].nodePort, undefined)
    assert.equal((await client.post(SVCS, clusterIPService('b', { type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] }))).status, 201)
  })
})

describe('services: dry run', () => {
  it('shows the IP and node port a create would get, refuses taken ones, and keeps nothing', async () => {
    const client = await startServer({ serviceClusterIPRange: ['10.96.0.0/24'], serviceNodePortRange: { first: 31000, last: 31001 } })
    const dry = await client.post(`${SVCS}?dryRun=All`, clusterIPService('np', { type: 'NodePort', clusterIP: '10.96.0.40' }))
    assert.equal(dry.status, 201, dry.text)
    assert.equal(dry.body.spec.clusterIP, '10.96.0.40')
    assert.ok(dry.body.spec.ports[0].nodePort >= 31000 && dry.body.spec.ports[0].nodePort <= 31001, dry.text)
    assert.equal((await client.get(`${SVCS}/np`)).status, 404)
    // Nothing was kept: the same IP and both node ports are still free for a real create.
    const real = await client.post(SVCS, clusterIPService('np', { type: 'NodePort', clusterIP: '10.96.0.40', ports: [{ name: 'a', port: 80 }, { name: 'b', port: 81 }] }))
    assert.equal(real.status, 201, real.text)
    const taken = await client.post(`${SVCS}?dryRun=All`, clusterIPService('other', { clusterIP: '10.96.0.40' }))
    assert.equal(taken.status, 422)
    assert.match(taken.body.message, /spec.clusterIPs: Invalid value: \[\]string\{"10.96.0.40"\}: failed to allocate IP 10.96.0.40: provided IP is already allocated/)
    const change = await client.put(`${SVCS}/np?dryRun=All`, { ...real.body, spec: { ...real.body.spec, ports: [...real.body.spec.ports, { name: 'c', port: 82 }] } })
    assert.equal(change.status, 500, 'a third node port does not fit the range of two')
    assert.match(change.body.message, /range is full/)
  })
})

describe('services: after a restart', () => {
  it('knows which IPs and node ports the stored services hold', async () => {
    const storage = new MemoryStorage()
    const before = await serverOn(storage)
    await before.post(SVCS, clusterIPService('a', { type: 'NodePort', clusterIP: '10.0.0.30', ports: [{ port: 80, nodePort: 30090 }] }))
    await before.server.shutdown()
    const after = await serverOn(storage)
    const ip = await after.post(SVCS, clusterIPService('b', { clusterIP: '10.0.0.30' }))
    assert.equal(ip.status, 422)
    assert.match(ip.body.message, /provided IP is already allocated/)
    const port = await after.post(SVCS, clusterIPService('c', { type: 'NodePort', ports: [{ port: 80, nodePort: 30090 }] }))
    assert.match(port.body.message, /provided port is already allocated/)
    await after.server.shutdown()
  })
})

describe('the kubernetes service', () => {
  it('exists in default with the first IP, port 443 to the secure port, and endpoints at the advertised address', async () => {
    const client = await startServer({ securePort: 6443, advertiseAddress: '192.0.2.10' })
    const svc = await client.get(`${SVCS}/kubernetes`)
    assert.equal(svc.status, 200)
    assert.equal(svc.body.spec.clusterIP, '10.0.0.1')
    assert.deepEqual(svc.body.spec.ports, [{ name: 'https', protocol: 'TCP', port: 443, targetPort: 6443 }])
    const ep = await client.get('/api/v1/namespaces/default/endpoints/kubernetes')
    assert.deepEqual(ep.body.subsets, [{ addresses: [{ ip: '192.0.2.10' }], ports: [{ name: 'https', port: 6443, protocol: 'TCP' }] }])
    const slice = await client.get('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes')
    assert.equal(slice.status, 200)
    assert.deepEqual(slice.body.endpoints[0].addresses, ['192.0.2.10'])
    assert.equal(slice.body.metadata.labels['kubernetes.io/service-name'], 'kubernetes')
  })

  // A slice may not name a loopback address (upstream's validation refuses it); Endpoints may here, for local servers.
  it('keeps Endpoints alone for a server advertising a loopback address, with no slice refused at every start', async () => {
    const warnings: string[] = []
    const logger = { ...silentLogger, warn: (_fields: Record<string, unknown>, message: string) => void warnings.push(message) }
    const server = createTestServer({ securePort: 6443, advertiseAddress: '127.0.0.1' }, { logger })
    await server.ready
    const client = new TestClient(server)
    const ep = await eventually(() => client.get('/api/v1/namespaces/default/endpoints/kubernetes'), (r) => r.status === 200)
    assert.deepEqual(ep.body.subsets[0].addresses, [{ ip: '127.0.0.1' }])
    assert.equal((await client.get('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes')).status, 404)
    assert.deepEqual(warnings.filter((w) => w.includes('kubernetes service')), [])
    await server.shutdown()
  })

  it('waits for the port chosen at listen time, and comes back when deleted', async () => {
    const client = await startServer()
    assert.equal((await client.get(`${SVCS}/kubernetes`)).status, 404)
    await client.server.setSecurePort(40123)
    assert.equal((await client.get(`${SVCS}/kubernetes`)).body.spec.ports[0].targetPort, 40123)
    assert.equal((await client.delete(`${SVCS}/kubernetes`)).status, 200)
    const back = await eventually(() => client.get(`${SVCS}/kubernetes`), (r) => r.status === 200)
    assert.equal(back.body.spec.clusterIP, '10.0.0.1')
  })

  it('is a NodePort service with --platform-service-node-port, and has no endpoints with the none reconciler', async () => {
    const client = await startServer({ securePort: 6443, platformServiceNodePort: 30443, endpointReconcilerType: 'none' })
    const svc = await client.get(`${SVCS}/kubernetes`)
    assert.equal(svc.body.spec.type, 'NodePort')
    assert.equal(svc.body.spec.ports[0].nodePort, 30443)
    assert.equal((await client.get('/api/v1/namespaces/default/endpoints/kubernetes')).status, 404)
  })
})

describe('the default service account', () => {
  it('appears in a new namespace and comes back when deleted', async () => {
    const client = await startServer()
    await client.post('/api/v1/namespaces', { metadata: { name: 'team' } })
    const path = '/api/v1/namespaces/team/serviceaccounts/default'
    await eventually(() => client.get(path), (r) => r.status === 200)
    assert.equal((await client.delete(path)).status, 200)
    await eventually(() => client.get(path), (r) => r.status === 200)
  })

  it('is not created when the controller is off', async () => {
    const client = await startServer({ serviceAccountsController: false })
    await client.post('/api/v1/namespaces', { metadata: { name: 'team' } })
    assert.equal((await client.get('/api/v1/namespaces/team/serviceaccounts/default')).status, 404)
  })
})
