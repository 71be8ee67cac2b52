/** The status and scale subresources, and how the main endpoint and generation relate to them. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { startServer, type TestClient } from './harness.js'

const DEPLOYS = '/apis/apps/v1/namespaces/default/deployments'
const RCS = '/api/v1/namespaces/default/replicationcontrollers'
const PODS = '/api/v1/namespaces/default/pods'
const MERGE = 'application/merge-patch+json'

const template = {
  metadata: { labels: { app: 'web' } },
  spec: { containers: [{ name: 'web', image: 'nginx' }] },
}

async function createDeployment(api: TestClient, name = 'web', replicas = 1) {
  const res = await api.post(DEPLOYS, {
    metadata: { name },
    spec: { replicas, selector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['front', 'back'] }] }, template: { ...template, metadata: { labels: { app: 'web', tier: 'front' } } } },
  })
  assert.equal(res.status, 201, res.text)
  return res.body
}

describe('the status subresource', () => {
  it('changes only the status of a deployment, whatever else the body says', async () => {
    const api = await startServer()
    const created = await createDeployment(api)
    const body = { ...created, spec: { ...created.spec, replicas: 7 }, metadata: { ...created.metadata, labels: { x: 'y' } }, status: { replicas: 3, readyReplicas: 2 } }
    const res = await api.put(`${DEPLOYS}/web/status`, body)
    assert.equal(res.status, 200, res.text)
    assert.equal(res.body.spec.replicas, 1)
    assert.equal(res.body.metadata.labels, undefined)
    assert.equal(res.body.status.replicas, 3)
    assert.equal(res.body.status.readyReplicas, 2)
    assert.equal(res.body.metadata.generation, 1)
    const got = await api.get(`${DEPLOYS}/web/status`)
    assert.equal(got.status, 200)
    assert.deepEqual(got.body, res.body)
  })

  it('leaves the status alone when the main endpoint is written', async () => {
    const api = await startServer()
    await createDeployment(api)
    await api.patch(`${DEPLOYS}/web/status`, { status: { replicas: 1 } }, MERGE)
    const res = await api.patch(`${DEPLOYS}/web`, { spec: { replicas: 2 }, status: { replicas: 9 } }, MERGE)
    assert.equal(res.status, 200, res.text)
    assert.equal(res.body.spec.replicas, 2)
    assert.deepEqual(res.body.status, { replicas: 1 })
  })

  it('updates a pod status without touching its spec, and keeps the status on a main update', async () => {
    const api = await startServer()
    const created = await api.post(PODS, { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } })
    assert.equal(created.status, 201, created.text)
    const status = await api.patch(`${PODS}/p/status`, { spec: { nodeName: 'node-1' }, status: { phase: 'Running', podIP: '10.0.0.5' } }, MERGE)
    assert.equal(status.status, 200, status.text)
    assert.equal(status.body.status.phase, 'Running')
    assert.equal(status.body.spec.nodeName, undefined)
    const main = await api.patch(`${PODS}/p`, { metadata: { labels: { a: 'b' } }, status: { phase: 'Failed' } }, MERGE)
    assert.equal(main.status, 200, main.text)
    assert.equal(main.body.status.phase, 'Running')
    assert.deepEqual(main.body.metadata.labels, { a: 'b' })
  })

  it('changes a namespace status through status only', async () => {
    const api = await startServer()
    await api.post('/api/v1/namespaces', { metadata: { name: 'team' } })
    const main = await api.patch('/api/v1/namespaces/team', { status: { phase: 'Terminating' } }, MERGE)
    assert.equal(main.body.status.phase, 'Active')
    const status = await api.patch('/api/v1/namespaces/team/status', { spec: { finalizers: [] }, status: { conditions: [{ type: 'X', status: 'True' }] } }, MERGE)
    assert.equal(status.status, 200, status.text)
    assert.deepEqual(status.body.spec, { finalizers: ['kubernetes'] })
    // NamespaceCondition's lastTransitionTime is a metav1.Time, not a pointer: Go writes it unset as null.
    assert.deepEqual(status.body.status.conditions, [{ type: 'X', status: 'True', lastTransitionTime: null }])
  })

  it('conflicts on a stale resourceVersion', async () => {
    const api = await startServer()
    const created = await createDeployment(api)
    await api.patch(`${DEPLOYS}/web`, { spec: { replicas: 2 } }, MERGE)
    const res = await api.put(`${DEPLOYS}/web/status`, { ...created, status: { replicas: 1 } })
    assert.equal(res.status, 409)
    assert.equal(
      res.body.message,
      'Operation cannot be fulfilled on deployments.apps "web": the object has been modified; please apply your changes to the latest version and try again',
    )
  })

  it('is not found for a resource without it', async () => {
    const api = await startServer()
    await api.post('/api/v1/namespaces/default/configmaps', { metadata: { name: 'c' } })
    const res = await api.get('/api/v1/namespaces/default/configmaps/c/status')
    assert.equal(res.status, 404)
  })
})

describe('generation', () => {
  it('starts at 1 and counts spec changes only', async () => {
    const api = await startServer()
    const created = await createDeployment(api)
    assert.equal(created.metadata.generation, 1)
    const labels = await api.patch(`${DEPLOYS}/web`, { metadata: { labels: { a: 'b' } } }, MERGE)
    assert.equal(labels.body.metadata.generation, 1)
    const spec = await api.patch(`${DEPLOYS}/web`, { spec: { replicas: 4 } }, MERGE)
    assert.equal(spec.body.metadata.generation, 2)
    const status = await api.patch(`${DEPLOYS}/web/status`, { status: { replicas: 4 } }, MERGE)
    assert.equal(status.body.metadata.generation, 2)
    const same = await api.patch(`${DEPLOYS}/web`, { spec: { replicas: 4 } }, MERGE)
    assert.equal(same.body.metadata.generation, 2)
  })

  it('counts spec changes of the other kinds upstream tracks it for (network policies, cron jobs)', async () => {
    const api = await startServer()
    const NP = '/apis/networking.k8s.io/v1/namespaces/default/networkpolicies'
    const np = await api.post(NP, { metadata: { name: 'deny' }, spec: { podSelector: {} } })
    assert.equal(np.status, 201, np.text)
    assert.equal(np.body.metadata.generation, 1)
    const changed = await api.patch(`${NP}/deny`, { spec: { policyTypes: ['Ingress', 'Egress'] } }, MERGE)
    assert.equal(changed.body.metadata.generation, 2)
    const CJ = '/apis/batch/v1/namespaces/default/cronjobs'
    const template = { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } }
    const cj = await api.post(CJ, { metadata: { name: 'tick' }, spec: { schedule: '*/5 * * * *', jobTemplate: template } })
    assert.equal(cj.status, 201, cj.text)
    assert.equal(cj.body.metadata.generation, 1)
    const suspended = await api.patch(`${CJ}/tick`, { spec: { suspend: true } }, MERGE)
    assert.equal(suspended.body.metadata.generation, 2)
  })

  it('is not set on resources that do not track it', async () => {
    const api = await startServer()
    const cm = await api.post('/api/v1/namespaces/default/configmaps', { metadata: { name: 'c' }, data: { a: 'b' } })
    assert.equal(cm.body.metadata.generation, undefined)
  })
})

describe('the scale subresource', () => {
  it('reads replicas and the selector of a deployment as a Scale', async () => {
    const api = await startServer()
    const created = await createDeployment(api, 'web', 2)
    await api.patch(`${DEPLOYS}/web/status`, { status: { replicas: 1 } }, MERGE)
    const res = await api.get(`${DEPLOYS}/web/scale`)
    assert.equal(res.status, 200, res.text)
    assert.equal(res.body.kind, 'Scale')
    assert.equal(res.body.apiVersion, 'autoscaling/v1')
    assert.equal(res.body.metadata.name, 'web')
    assert.equal(res.body.metadata.namespace, 'default')
    assert.equal(res.body.metadata.uid, created.metadata.uid)
    assert.deepEqual(res.body.spec, { replicas: 2 })
    assert.deepEqual(res.body.status, { replicas: 1, selector: 'app=web,tier in (back,front)' })
  })

  it('writes spec.replicas with a PUT and a PATCH', async () => {
    const api = await startServer()
    await createDeployment(api)
    const scale = (await api.get(`${DEPLOYS}/web/scale`)).body
    const put = await api.put(`${DEPLOYS}/web/scale`, { ...scale, spec: { replicas: 3 } })
    assert.equal(put.status, 200, put.text)
    assert.deepEqual(put.body.spec, { replicas: 3 })
    const patched = await api.patch(`${DEPLOYS}/web/scale`, { spec: { replicas: 5 } }, MERGE)
    assert.equal(patched.status, 200, patched.text)
    assert.deepEqual(patched.body.spec, { replicas: 5 })
    const deploy = (await api.get(`${DEPLOYS}/web`)).body
    assert.equal(deploy.spec.replicas, 5)
    assert.equal(deploy.metadata.generation, 3)
  })

  it('writes spec.replicas with a JSON patch and a strategic merge patch, and keeps it through a patch of other fields', async () => {
    const api = await startServer()
    await createDeployment(api, 'web', 2)
    const json = await api.patch(`${DEPLOYS}/web/scale`, [{ op: 'replace', path: '/spec/replicas', value: 4 }], 'application/json-patch+json')
    assert.equal(json.status, 200, json.text)
    assert.deepEqual(json.body.spec, { replicas: 4 })
    const labelled = await api.patch(`${DEPLOYS}/web/scale`, [{ op: 'add', path: '/metadata/labels', value: { a: 'b' } }], 'application/json-patch+json')
    assert.equal(labelled.status, 200, labelled.text)
    assert.deepEqual(labelled.body.spec, { replicas: 4 }, 'a patch that leaves spec alone leaves the replicas')
    const strategic = await api.patch(`${DEPLOYS}/web/scale`, { spec: { replicas: 6 } }, 'application/strategic-merge-patch+json')
    assert.deepEqual(strategic.body.spec, { replicas: 6 })
    assert.equal((await api.get(`${DEPLOYS}/web`)).body.spec.replicas, 6)
  })

  it('refuses a Scale that names another object, or none, before reading the object, and changes nothing', async () => {
    const api = await startServer()
    await createDeployment(api, 'web', 2)
    const scale = (await api.get(`${DEPLOYS}/web/scale`)).body
    const refusals: [string, unknown, string][] = [
      [`${DEPLOYS}/web/scale`, { ...scale, metadata: { ...scale.metadata, name: 'other' } }, 'the name of the object (other) does not match the name on the URL (web)'],
      [`${DEPLOYS}/web/scale`, { apiVersion: 'autoscaling/v1', kind: 'Scale', spec: { replicas: 3 } }, 'the name of the object (web based on URL) was undeterminable: name must be provided'],
      [`${DEPLOYS}/missing/scale`, { ...scale, spec: { replicas: 3 } }, 'the name of the object (web) does not match the name on the URL (missing)'],
      [`${DEPLOYS}/web/scale`, { ...scale, spec: { replicas: 'x' } }, 'Scale in version "v1" cannot be handled as a Scale: json: cannot unmarshal string into Go struct field ScaleSpec.spec.replicas of type int32'],
    ]
    for (const [path, body, message] of refusals) {
      const res = await api.put(path, body)
      assert.equal(res.status, 400, res.text)
      assert.equal(res.body.message, message)
    }
    const renamed = await api.patch(`${DEPLOYS}/web/scale`, [{ op: 'replace', path: '/metadata/name', value: 'other' }], 'application/json-patch+json')
    assert.equal(renamed.status, 400)
    assert.equal(renamed.body.message, 'the name of the object (other) does not match the name on the URL (web)')
    const now = (await api.get(`${DEPLOYS}/web`)).body
    assert.equal(now.spec.replicas, 2)
    assert.equal(now.metadata.generation, 1)
  })

  it('conflicts when the Scale carries a stale resourceVersion', async () => {
    const api = await startServer()
    await createDeployment(api)
    const scale = (await api.get(`${DEPLOYS}/web/scale`)).body
    await api.patch(`${DEPLOYS}/web`, { metadata: { labels: { a: 'b' } } }, MERGE)
    const res = await api.put(`${DEPLOYS}/web/scale`, { ...scale, spec: { replicas: 3 } })
    assert.equal(res.status, 409)
    assert.equal(
      res.body.message,
      'Operation cannot be fulfilled on deployments.apps "web": the object has been modified; please apply your changes to the latest version and try again',
    )
  })

  it('refuses negative replicas', async () => {
    const api = await startServer()
    await createDeployment(api)
    const res = await api.patch(`${DEPLOYS}/web/scale`, { spec: { replicas: -1 } }, MERGE)
    assert.equal(res.status, 422)
    assert.equal(res.body.message, 'Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0')
  })

  it('prints a replication controller selector from its label map', async () => {
    const api = await startServer()
    const rc = await api.post(RCS, { metadata: { name: 'rc' }, spec: { replicas: 1, selector: { app: 'web', tier: 'front' }, template: { ...template, metadata: { labels: { app: 'web', tier: 'front' } } } } })
    assert.equal(rc.status, 201, rc.text)
    const res = await api.get(`${RCS}/rc/scale`)
    assert.deepEqual(res.body.status, { replicas: 0, selector: 'app=web,tier=front' })
    const put = await api.put(`${RCS}/rc/scale`, { ...res.body, spec: { replicas: 0 } })
    assert.equal(put.status, 200, put.text)
    assert.deepEqual(put.body.spec, {})
  })

  it('is not served for a resource without it', async () => {
    const api = await startServer()
    await api.post('/api/v1/namespaces/default/configmaps', { metadata: { name: 'c' } })
    assert.equal((await api.get('/api/v1/namespaces/default/configmaps/c/scale')).status, 404)
  })

  it('names what is missing as upstream\u2019s scale storage of each kind does', async () => {
    const api = await startServer()
    const missing = async (path: string) => {
      const res = await api.get(path)
      assert.equal(res.status, 404, res.text)
      return res.body.message
    }
    assert.equal(await missing('/apis/apps/v1/namespaces/default/deployments/nope/scale'), 'deployments/scale.apps "nope" not found')
    assert.equal(await missing('/apis/apps/v1/namespaces/default/replicasets/nope/scale'), 'replicasets/scale.apps "nope" not found')
    assert.equal(await missing('/api/v1/namespaces/default/replicationcontrollers/nope/scale'), 'replicationcontrollers/scale.autoscaling "nope" not found')
    assert.equal(await missing('/apis/apps/v1/namespaces/default/statefulsets/nope/scale'), 'statefulsets.apps "nope" not found')
  })
})
