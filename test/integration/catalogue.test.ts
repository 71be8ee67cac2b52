/**
 * The built-in catalogue through `fetch`: every resource can be created and
 * read back where upstream keeps it, kinds travel as protobuf, a wrong type
 * is refused before anything is stored, and the versions of one resource
 * share their objects.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { MemoryStorage } from '../../core/index.js'
import { goEncodedCopy } from '../../core/encoding/canonical.js'
import { decodeProtobuf, encodeProtobuf } from '../../core/encoding/protobuf.js'
import type { ResourceEntry } from '../../core/resources/catalogue.js'
import { apiVersionOf, collectionPath, SAMPLES } from './catalogue-samples.js'
import { createTestServer, eventually, TestClient } from './harness.js'

const PROTOBUF = 'application/vnd.kubernetes.protobuf'
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io'

let api: TestClient
let storage: MemoryStorage

before(async () => {
  storage = new MemoryStorage()
  const server = createTestServer({ watchCache: false }, { storage })
  await server.ready
  api = new TestClient(server)
})

function entryOf(gvr: string): ResourceEntry {
  const [group, version, resource] = gvr.split('/')
  const entry = api.server.catalogue.lookup(group ?? '', version ?? '', resource ?? '')
  assert.ok(entry, `no catalogue entry for ${gvr}`)
  return entry
}

/** `actual` holds everything `expected` does; defaults the server fills in may come on top. */
function assertIncludes(actual: unknown, expected: unknown, message: string): void {
  if (Array.isArray(expected) && Array.isArray(actual) && actual.length === expected.length) {
    expected.forEach((item, i) => assertIncludes(actual[i], item, `${message}[${i}]`))
  } else if (expected && typeof expected === 'object' && !Array.isArray(expected) && actual && typeof actual === 'object') {
    for (const [key, value] of Object.entries(expected)) assertIncludes((actual as Record<string, unknown>)[key], value, `${message}.${key}`)
  } else {
    assert.deepEqual(actual, expected, message)
  }
}

function kindBody(gvr: string, body: Record<string, unknown>): Record<string, unknown> {
  return { apiVersion: apiVersionOf(gvr), kind: entryOf(gvr).kind, ...body }
}


describe('every built-in resource', () => {
  it('has a sample here, so that none is left untried', () => {
    const tried = new Set(SAMPLES.map((s) => s.gvr))
    const stored = api.server.catalogue.entries.filter((e) => !e.virtualCreate && e.verbs.includes('create'))
    const untried = stored.map((e) => `${e.group}/${e.version}/${e.resource}`).filter((gvr) => !tried.has(gvr))
    assert.deepEqual(untried, [])
  })

  for (const sample of SAMPLES) {
    it(`creates and reads back ${sample.gvr}, stored at ${sample.key}`, async () => {
      const entry = entryOf(sample.gvr)
      const path = collectionPath(sample.gvr, entry.namespaced)
      const created = await api.post(path, kindBody(sample.gvr, sample.body))
      assert.equal(created.status, 201, created.text)
      const name = (sample.body['metadata'] as { name: string }).name
      const got = await api.get(`${path}/${name}`)
      assert.equal(got.status, 200, got.text)
      assert.equal(got.body.kind, entry.kind)
      assert.equal(got.body.apiVersion, apiVersionOf(sample.gvr))
      // What was sent, as Go encodes it: its empty lists and maps with omitempty left out, as upstream stores them.
      const sent = goEncodedCopy(kindBody(sample.gvr, sample.body))
      for (const field of Object.keys(sample.body)) {
        if (field !== 'metadata') assertIncludes(got.body[field], sent[field], `${field} of ${sample.gvr}`)
      }
      assert.ok(await storage.get(sample.key), `nothing stored at ${sample.key}`)
    })
  }

  // A CRD's name must be its plural and group, and its delete waits for its custom resources to go:
  // crd-definitions.test.ts covers its lifecycle.
  for (const sample of SAMPLES.filter((s) => s.gvr !== 'apiextensions.k8s.io/v1/customresourcedefinitions')) {
    it(`updates, refuses a bad name for, and deletes ${sample.gvr}`, async () => {
      const entry = entryOf(sample.gvr)
      const path = collectionPath(sample.gvr, entry.namespaced)
      const meta = sample.body['metadata'] as { name: string }
      // IPAddresses are named by their address, APIServices by the version and group they serve.
      const name = entry.resource === 'ipaddresses' ? '10.96.0.11' : entry.resource === 'apiservices' ? 'v1.lifecycle.example.com' : `${meta.name}-lifecycle`
      const served = entry.resource === 'apiservices' ? { spec: { ...(sample.body['spec'] as object), group: 'lifecycle.example.com' } } : {}
      const body = kindBody(sample.gvr, { ...sample.body, ...served, metadata: { ...meta, name } })
      assert.equal((await api.post(path, body)).status, 201)
      // Some kinds get a status written by the server's controllers just after creation (a policy's type check, a
      // flow schema's conditions): an update from an older read meets 409 Conflict, and a client reads again.
      const updated = await api.update(`${path}/${name}`, (current) => ({ ...current, metadata: { ...current.metadata, labels: { lifecycle: 'updated' } } }))
      assert.equal(updated.status, 200, updated.text)
      assertIncludes((await api.get(`${path}/${name}`)).body.metadata.labels, { lifecycle: 'updated' }, 'labels')

      // A slash is refused by every name rule (422), or else by the storage key (400) for kinds with none.
      const bad = await api.post(path, kindBody(sample.gvr, { ...sample.body, metadata: { ...meta, name: 'bad/name' } }))
      if (bad.status === 422) assert.equal(bad.body.details.causes[0].field, 'metadata.name')
      else assert.deepEqual([bad.status, bad.body.message], [400, 'Name parameter invalid: "bad/name": may not contain \'/\''])
      const names = (await api.get(path)).body.items.map((i: { metadata: { name: string } }) => i.metadata.name)
      assert.ok(!names.includes('bad/name'))

      const deleted = await api.delete(`${path}/${name}`)
      assert.equal(deleted.status, 200, deleted.text)
      // Namespaces are emptied and removed in the background, and so are volumes and claims once their protection
      // controller removes its finalizer (as upstream's controller manager does), and ReplicationControllers and Jobs
      // once the garbage collector has orphaned their pods (their default policy); everything else goes at once.
      if (['persistentvolumes', 'persistentvolumeclaims', 'replicationcontrollers', 'jobs'].includes(entry.resource))
        await eventually(`${name} is gone`, async () => (await api.get(`${path}/${name}`)).status === 404)
      else if (entry.resource !== 'namespaces') assert.equal((await api.get(`${path}/${name}`)).status, 404)
    })
  }
})

describe('protobuf', () => {
  for (const gvr of ['/v1/pods', 'apps/v1/deployments', '/v1/services', 'rbac.authorization.k8s.io/v1/roles']) {
    it(`round-trips ${gvr}, embedded structs (volume sources, probe handlers) included`, async () => {
      const sample = SAMPLES.find((s) => s.gvr === gvr)!
      const entry = entryOf(gvr)
      const name = `${(sample.body['metadata'] as { name: string }).name}-pb`
      const body = kindBody(gvr, { ...sample.body, metadata: { name } })
      const created = await api.call('POST', collectionPath(gvr, entry.namespaced), {
        body: encodeProtobuf(body),
        headers: { 'content-type': PROTOBUF, accept: 'application/json' },
      })
      assert.equal(created.status, 201, created.text)
      const res = await api.server.fetch(
        new Request(`http://in-process${collectionPath(gvr, entry.namespaced)}/${name}`, { headers: { accept: PROTOBUF } }),
      )
      assert.equal(res.headers.get('content-type'), PROTOBUF)
      const decoded = decodeProtobuf(new Uint8Array(await res.arrayBuffer()))
      for (const [field, value] of Object.entries(sample.body)) {
        if (field !== 'metadata') assertIncludes(decoded[field], value, field)
      }
    })
  }
})

describe('bodies of the wrong type', () => {
  it('refuses a string where a list belongs, in upstream words, and stores nothing', async () => {
    const r = await api.post('/api/v1/namespaces/default/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'bad-pod' },
      spec: { containers: 'web' },
    })
    assert.equal(r.status, 400)
    assert.equal(r.body.reason, 'BadRequest')
    assert.equal(
      r.body.message,
      'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal string into Go struct field PodSpec.spec.containers of type []v1.Container',
    )
    assert.equal((await api.get('/api/v1/namespaces/default/pods/bad-pod')).status, 404)
    assert.equal(await storage.get('/registry/pods/default/bad-pod'), undefined)
  })

  it('refuses a number that is not an int32, and a string in a map of strings', async () => {
    const replicas = await api.post('/apis/apps/v1/namespaces/default/deployments', {
      metadata: { name: 'bad-deploy' },
      spec: { replicas: 1.5 },
    })
    assert.equal(replicas.status, 400)
    assert.equal(
      replicas.body.message,
      'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32',
    )
    const labels = await api.post('/api/v1/namespaces/default/configmaps', { metadata: { name: 'bad-cm', labels: { tier: 1 } } })
    assert.equal(labels.status, 400)
    assert.equal(
      labels.body.message,
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string',
    )
  })

  it('refuses a malformed quantity and a malformed time with their decoders’ words', async () => {
    const cpu = await api.post('/api/v1/namespaces/default/pods', {
      metadata: { name: 'bad-cpu' },
      spec: { containers: [{ name: 'c', image: 'i', resources: { limits: { cpu: 'lots' } } }] },
    })
    assert.equal(cpu.status, 400)
    assert.equal(
      cpu.body.message,
      "Pod in version \"v1\" cannot be handled as a Pod: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    )
    const time = await api.post('/apis/batch/v1/namespaces/default/cronjobs', {
      metadata: { name: 'bad-time' },
      spec: { schedule: '* * * * *', jobTemplate: {} },
      status: { lastScheduleTime: 'yesterday' },
    })
    assert.equal(time.status, 400)
    assert.equal(
      time.body.message,
      'CronJob in version "v1" cannot be handled as a CronJob: parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"',
    )
  })

  it('drops fields the type does not have, and stores quantities (numbers too) in canonical form', async () => {
    const r = await api.post('/api/v1/namespaces/default/pods', {
      metadata: { name: 'extra-fields', creationTimestamp: null },
      spec: { containers: [{ name: 'c', image: 'i', colour: 'blue', resources: { requests: { cpu: 1, memory: '1024Mi' }, limits: { cpu: '1000m' } } }] },
      flavour: 'vanilla',
    })
    assert.equal(r.status, 201, r.text)
    const [container] = r.body.spec.containers
    assert.equal(container.colour, undefined)
    assert.deepEqual(container.resources, { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1' } })
    assert.equal(r.body.flavour, undefined)
  })
})

describe('one resource in two versions', () => {
  const HPA = 'horizontalpodautoscalers'

  it('serves an autoscaling/v1 HPA as v2 with a CPU utilization metric, and back', async () => {
    const created = await api.post(`/apis/autoscaling/v1/namespaces/default/${HPA}`, {
      metadata: { name: 'web-v1' },
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 4, targetCPUUtilizationPercentage: 65 },
    })
    assert.equal(created.status, 201, created.text)
    const v2 = await api.get(`/apis/autoscaling/v2/namespaces/default/${HPA}/web-v1`)
    assert.equal(v2.body.apiVersion, 'autoscaling/v2')
    assert.deepEqual(v2.body.spec.metrics, [
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 65 } } },
    ])
    const stored = await storage.get('/registry/horizontalpodautoscalers/default/web-v1')
    assert.equal(stored?.apiVersion, 'autoscaling/v2')
    const v1 = await api.get(`/apis/autoscaling/v1/namespaces/default/${HPA}/web-v1`)
    assert.equal(v1.body.spec.targetCPUUtilizationPercentage, 65)
    assert.equal(v1.body.spec.metrics, undefined)
  })

  it('keeps v2 metrics that v1 cannot express in upstream’s annotation, and restores them', async () => {
    const metrics = [{ type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '10' } } }]
    await api.post(`/apis/autoscaling/v2/namespaces/default/${HPA}`, {
      metadata: { name: 'web-v2' },
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 4, metrics },
    })
    const v1 = await api.get(`/apis/autoscaling/v1/namespaces/default/${HPA}/web-v2`)
    assert.deepEqual(JSON.parse(v1.body.metadata.annotations['autoscaling.alpha.kubernetes.io/metrics']), [
      { type: 'Pods', pods: { metricName: 'qps', targetAverageValue: '10' } },
    ])
    const updated = await api.put(`/apis/autoscaling/v1/namespaces/default/${HPA}/web-v2`, { ...v1.body, spec: { ...v1.body.spec, maxReplicas: 6 } })
    assert.equal(updated.status, 200, updated.text)
    const v2 = await api.get(`/apis/autoscaling/v2/namespaces/default/${HPA}/web-v2`)
    assert.equal(v2.body.spec.maxReplicas, 6)
    assert.deepEqual(v2.body.spec.metrics, metrics)
    assert.equal(v2.body.metadata.annotations, undefined)
  })

  it('prints the TARGETS of either version the same way', async () => {
    for (const version of ['v1', 'v2']) {
      const table = await api.get(`/apis/autoscaling/${version}/namespaces/default/${HPA}`, { headers: { accept: TABLE } })
      const row = table.body.rows.find((r: { cells: unknown[] }) => r.cells[0] === 'web-v1')
      assert.deepEqual(row.cells.slice(0, 6), ['web-v1', 'Deployment/web', 'cpu: <unknown>/65%', '1', 4, 0])
    }
  })

  it('shares events between core v1 and events.k8s.io/v1 under their own field names', async () => {
    const created = await api.post('/apis/events.k8s.io/v1/namespaces/default/events', {
      metadata: { name: 'started' },
      regarding: { kind: 'Pod', name: 'web', namespace: 'default' },
      note: 'Started container',
      reason: 'Started',
      type: 'Normal',
      action: 'Start',
      reportingController: 'example.com/controller',
      reportingInstance: 'controller-1',
      eventTime: '2024-05-01T10:00:00.000000Z',
    })
    assert.equal(created.status, 201, created.text)
    const core = await api.get('/api/v1/namespaces/default/events/started')
    assert.equal(core.body.message, 'Started container')
    assert.deepEqual(core.body.involvedObject, { kind: 'Pod', name: 'web', namespace: 'default' })
    assert.equal(core.body.reportingComponent, 'example.com/controller')
    const byReason = await api.get('/apis/events.k8s.io/v1/namespaces/default/events?fieldSelector=reason%3DStarted')
    assert.ok(byReason.body.items.some((e: { note?: string }) => e.note === 'Started container'))
  })
})

describe('subresources not served yet', () => {
  it('answer 404 NotFound, never a success', async () => {
    const unknown = await api.get('/apis/apps/v1/namespaces/default/deployments/deploy1/nothing')
    assert.equal(unknown.status, 404)
    assert.equal(unknown.body.kind, 'Status')
  })
})

describe('tables', () => {
  it('print deployments as kubectl shows them, wide columns included', async () => {
    const table = await api.get('/apis/apps/v1/namespaces/default/deployments', { headers: { accept: TABLE } })
    assert.deepEqual(
      table.body.columnDefinitions.map((c: { name: string; priority: number }) => `${c.name}:${c.priority}`),
      ['Name:0', 'Ready:0', 'Up-to-date:0', 'Available:0', 'Age:0', 'Containers:1', 'Images:1', 'Selector:1'],
    )
    const row = table.body.rows.find((r: { cells: unknown[] }) => r.cells[0] === 'deploy1')
    assert.deepEqual(row.cells.slice(0, 4), ['deploy1', '0/3', 0, 0])
    assert.deepEqual(row.cells.slice(5), ['web', 'nginx:1.27', 'app=web'])
  })

  it('print services with their ports, and roles with upstream’s default columns', async () => {
    const services = await api.get('/api/v1/namespaces/default/services', { headers: { accept: TABLE } })
    const svc = services.body.rows.find((r: { cells: unknown[] }) => r.cells[0] === 'svc1')
    assert.deepEqual(svc.cells.slice(0, 5), ['svc1', 'ClusterIP', svc.cells[2], '<none>', '80/TCP'])
    assert.match(svc.cells[2], /^10\.0\.0\.\d+$/, 'a cluster IP from the default range')
    assert.equal(svc.cells[6], 'app=web')
    const roles = await api.get('/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles', { headers: { accept: TABLE } })
    assert.deepEqual(
      roles.body.columnDefinitions.map((c: { name: string }) => c.name),
      ['Name', 'Created At'],
    )
  })
})
