/**
 * The checks /healthz, /livez and /readyz list, by upstream's names and in
 * upstream's order: a post-start hook's check is on all three endpoints (the
 * "boot sequence"), informer-sync, etcd-readiness and shutdown on /readyz
 * alone. Monitoring and upstream's own e2e suite ("health handlers should
 * contain necessary checks") look for these names.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { ListOptions, ListResult } from '../../core/storage/interface.js'
import { MemoryStorage } from '../../core/storage/memory.js'
import { createTestServer, startServer, TestClient } from './harness.js'

/** A store whose lists of custom resource definitions wait until `release`: the CRD controller's start held. */
class HeldDefinitions extends MemoryStorage {
  release: () => void = () => {}
  private readonly held = new Promise<void>((resolve) => (this.release = resolve))

  override async list(prefix: string, opts?: ListOptions): Promise<ListResult> {
    if (prefix.includes('/customresourcedefinitions/')) await this.held
    return super.list(prefix, opts)
  }
}

/** kube-apiserver 1.32's boot sequence with the aggregator and RBAC, in its order, less the hooks of work this server does not do. */
const BOOT_SEQUENCE = [
  'poststarthook/start-apiserver-admission-initializer',
  'poststarthook/generic-apiserver-start-informers',
  'poststarthook/priority-and-fairness-config-consumer',
  'poststarthook/priority-and-fairness-filter',
  'poststarthook/start-apiextensions-informers',
  'poststarthook/start-apiextensions-controllers',
  'poststarthook/crd-informer-synced',
  'poststarthook/start-system-namespaces-controller',
  'poststarthook/start-cluster-authentication-info-controller',
  'poststarthook/start-kube-apiserver-identity-lease-controller',
  'poststarthook/start-kube-apiserver-identity-lease-garbage-collector',
  'poststarthook/start-legacy-token-tracking-controller',
  'poststarthook/rbac/bootstrap-roles',
  'poststarthook/scheduling/bootstrap-system-priority-classes',
  'poststarthook/priority-and-fairness-config-producer',
  'poststarthook/bootstrap-controller',
  'poststarthook/start-kube-aggregator-informers',
  'poststarthook/apiservice-status-local-available-controller',
  'poststarthook/apiservice-status-remote-available-controller',
  'poststarthook/apiservice-registration-controller',
  'poststarthook/apiservice-discovery-controller',
  'poststarthook/kube-apiserver-autoregistration',
  'autoregister-completion',
  'poststarthook/apiservice-openapi-controller',
  'poststarthook/apiservice-openapiv3-controller',
]

function checkNames(verbose: string): string[] {
  return verbose
    .split('\n')
    .filter((line) => line.startsWith('[+]') || line.startsWith('[-]'))
    .map((line) => line.slice(3).replace(/ (ok|excluded: ok|failed: reason withheld)$/, ''))
}

describe('health check names', () => {
  it('lists the boot sequence on all three endpoints and the readiness checks on /readyz alone, in upstream order', async () => {
    const api = await startServer({ aggregation: {}, authorizationModes: ['RBAC'] })
    const healthz = await api.get('/healthz?verbose')
    assert.equal(healthz.status, 200, healthz.text)
    assert.deepEqual(checkNames(healthz.text), ['ping', 'log', 'etcd', ...BOOT_SEQUENCE])
    assert.deepEqual(checkNames((await api.get('/livez?verbose')).text), ['ping', 'log', 'etcd', ...BOOT_SEQUENCE])
    assert.deepEqual(checkNames((await api.get('/readyz?verbose')).text), ['ping', 'log', 'etcd', 'etcd-readiness', 'informer-sync', ...BOOT_SEQUENCE, 'shutdown'])
    // Each has a path of its own, as upstream's do.
    for (const name of ['poststarthook/start-apiextensions-controllers', 'autoregister-completion', 'poststarthook/apiservice-openapi-controller']) {
      assert.equal((await api.get(`/healthz/${name}`)).text, 'ok', name)
      assert.equal((await api.get(`/livez/${name}`)).text, 'ok', name)
    }
    assert.equal((await api.get('/readyz/etcd-readiness')).text, 'ok')
    assert.equal((await api.get('/healthz/informer-sync')).status, 404, 'informer-sync is a readiness check alone')
    assert.equal((await api.get('/healthz/poststarthook/start-service-ip-repair-controllers')).status, 404, 'work this server does not do has no check')
    await api.server.shutdown()
  })

  it('leaves out the hooks of parts turned off: no aggregator, no RBAC, no priority and fairness', async () => {
    const api = await startServer({ serving: { priorityAndFairness: false } })
    const names = checkNames((await api.get('/healthz?verbose')).text)
    for (const absent of ['autoregister-completion', 'poststarthook/apiservice-registration-controller', 'poststarthook/rbac/bootstrap-roles', 'poststarthook/priority-and-fairness-filter'])
      assert.ok(!names.includes(absent), `${absent} in ${names.join(', ')}`)
    assert.ok(names.includes('poststarthook/crd-informer-synced'))
    await api.server.shutdown()
  })

  it('fails /healthz and its aliases while the work behind them has not finished, as upstream fails them until its hooks return', async () => {
    const storage = new HeldDefinitions()
    const server = createTestServer({}, { storage })
    const api = new TestClient(server)
    const early = await api.get('/healthz?verbose')
    assert.equal(early.status, 500, early.text)
    assert.match(early.text, /^\[-\]poststarthook\/start-apiextensions-informers failed: reason withheld$/m)
    assert.equal((await api.get('/healthz/poststarthook/start-apiextensions-controllers')).status, 500)
    storage.release()
    await server.ready
    assert.equal((await api.get('/healthz')).text, 'ok')
    await server.shutdown()
  })
})
