/**
 * A patch whose result does not decode as its kind (a ConfigMap's data made
 * a number, a Deployment's replicas a string, a field strict validation
 * refuses): upstream's patch handler answers 422 Invalid on the field
 * `patch`, quoting the patched object (JSON and merge patches, with the JSON
 * decoder's reason) or the patch as Go prints it (strategic merge, with the
 * unstructured converter's reason), and stores nothing.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { startServer, type TestClient } from './harness.js'

const CM = '/api/v1/namespaces/default/configmaps'
const DEPLOYMENTS = '/apis/apps/v1/namespaces/default/deployments'
const JSON_PATCH = 'application/json-patch+json'
const MERGE = 'application/merge-patch+json'
const STRATEGIC = 'application/strategic-merge-patch+json'

interface Status {
  status: string
  reason: string
  message: string
  code: number
  details: { causes: { reason: string; message: string; field: string }[] } & Record<string, unknown>
}

/** The 422 upstream answers, its message and single cause built from the quote and the decoder's complaint. */
function assertInvalidPatch(res: { status: number; body: Status }, quoted: (value: string) => boolean, detail: string): void {
  assert.equal(res.status, 422, JSON.stringify(res.body))
  const body = res.body
  assert.equal(body.reason, 'Invalid')
  assert.equal(body.code, 422)
  const match = /^ "" is invalid: patch: Invalid value: ("(?:[^"\\]|\\.)*"): (.*)$/s.exec(body.message)
  assert.ok(match, body.message)
  const value = JSON.parse(match[1]!) as string
  assert.ok(quoted(value), value)
  assert.equal(match[2], detail)
  assert.deepEqual(Object.keys(body.details), ['causes'], 'no kind, group or name: upstream names none')
  assert.deepEqual(body.details.causes, [{ reason: 'FieldValueInvalid', message: `Invalid value: ${match[1]}: ${detail}`, field: 'patch' }])
}

describe('a patch whose result does not fit its kind', () => {
  let api: TestClient
  let stored: { metadata: { resourceVersion: string } }
  let deployment: { metadata: { resourceVersion: string }; spec: { replicas: number } }
  before(async () => {
    api = await startServer()
    stored = (await api.post(CM, { metadata: { name: 'cfg' }, data: { a: '1' } })).body
    deployment = (
      await api.post(DEPLOYMENTS, {
        metadata: { name: 'web' },
        spec: { replicas: 1, selector: { matchLabels: { app: 'w' } }, template: { metadata: { labels: { app: 'w' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
      })
    ).body
  })

  const unchanged = async () => {
    const now = (await api.get(`${CM}/cfg`)).body
    assert.equal(now.metadata.resourceVersion, stored.metadata.resourceVersion, 'nothing was written')
    assert.deepEqual(now.data, { a: '1' })
  }

  it('answers a merge patch making data a number with 422 quoting the patched object', async () => {
    const res = await api.patch(`${CM}/cfg`, { data: { a: 1 } }, MERGE)
    assertInvalidPatch(
      res,
      (v) => {
        const patched = JSON.parse(v)
        return patched.data.a === 1 && patched.metadata.name === 'cfg' && patched.kind === 'ConfigMap'
      },
      'json: cannot unmarshal number into Go struct field ConfigMap.data of type string',
    )
    await unchanged()
  })

  it('answers a JSON patch making data a string with 422, also as a dry run', async () => {
    for (const query of ['', '?dryRun=All']) {
      const res = await api.patch(`${CM}/cfg${query}`, [{ op: 'replace', path: '/data', value: 's' }], JSON_PATCH)
      assertInvalidPatch(res, (v) => JSON.parse(v).data === 's', 'json: cannot unmarshal string into Go struct field ConfigMap.data of type map[string]string')
    }
    await unchanged()
  })

  it('answers a strategic merge patch with 422 quoting the patch as Go prints it', async () => {
    const res = await api.patch(`${CM}/cfg`, { data: { a: 1 } }, STRATEGIC)
    assertInvalidPatch(res, (v) => v === 'map[data:map[a:1]]', 'cannot convert int64 to string')
    const flag = await api.patch(`${CM}/cfg`, { data: { a: true } }, STRATEGIC)
    assertInvalidPatch(flag, (v) => v === 'map[data:map[a:true]]', 'unrecognized type: string')
    await unchanged()
  })

  it('answers a Deployment whose replicas a patch makes a string with 422, the Deployment unchanged', async () => {
    const merge = await api.patch(`${DEPLOYMENTS}/web`, { spec: { replicas: 'x' } }, MERGE)
    assertInvalidPatch(merge, (v) => JSON.parse(v).spec.replicas === 'x', 'json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32')
    const strategic = await api.patch(`${DEPLOYMENTS}/web`, { spec: { replicas: 'x' } }, STRATEGIC)
    assertInvalidPatch(strategic, (v) => v === 'map[spec:map[replicas:x]]', 'unrecognized type: int32')
    const half = await api.patch(`${DEPLOYMENTS}/web`, { spec: { replicas: 1.5 } }, STRATEGIC)
    assertInvalidPatch(half, (v) => v === 'map[spec:map[replicas:1.5]]', 'cannot convert float64 to int32')
    const now = (await api.get(`${DEPLOYMENTS}/web`)).body
    assert.equal(now.metadata.resourceVersion, deployment.metadata.resourceVersion)
    assert.equal(now.spec.replicas, 1)
  })

  it('answers a patch of the scale subresource making replicas a string with 422, the replicas unchanged', async () => {
    const merge = await api.patch(`${DEPLOYMENTS}/web/scale`, { spec: { replicas: 'x' } }, MERGE)
    assertInvalidPatch(merge, (v) => JSON.parse(v).kind === 'Scale' && JSON.parse(v).spec.replicas === 'x', 'json: cannot unmarshal string into Go struct field ScaleSpec.spec.replicas of type int32')
    const json = await api.patch(`${DEPLOYMENTS}/web/scale`, [{ op: 'replace', path: '/spec/replicas', value: true }], JSON_PATCH)
    assertInvalidPatch(json, (v) => JSON.parse(v).spec.replicas === true, 'json: cannot unmarshal bool into Go struct field ScaleSpec.spec.replicas of type int32')
    const strategic = await api.patch(`${DEPLOYMENTS}/web/scale`, { spec: { replicas: 'x' } }, STRATEGIC)
    assertInvalidPatch(strategic, (v) => v === 'map[spec:map[replicas:x]]', 'unrecognized type: int32')
    // A PUT of such a Scale is a body that does not decode: still 400.
    const put = await api.put(`${DEPLOYMENTS}/web/scale`, { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'web', namespace: 'default' }, spec: { replicas: 'x' } })
    assert.equal(put.status, 400)
    const now = (await api.get(`${DEPLOYMENTS}/web`)).body
    assert.equal(now.metadata.resourceVersion, deployment.metadata.resourceVersion)
    assert.equal(now.spec.replicas, 1)
  })

  it("refuses a Scale of another kind in upstream's decoder's words, the replicas unchanged", async () => {
    const scaleOf = (apiVersion: string, kind: string) => ({ apiVersion, kind, metadata: { name: 'web', namespace: 'default' }, spec: { replicas: 5 } })
    const unregistered = await api.put(`${DEPLOYMENTS}/web/scale`, scaleOf('autoscaling/v1', 'Deployment'))
    assert.equal(unregistered.status, 400)
    assert.equal(
      unregistered.body.message,
      'Deployment in version "v1" cannot be handled as a Scale: no kind "Deployment" is registered for version "autoscaling/v1" in scheme "k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30"',
    )
    const other = await api.put(`${DEPLOYMENTS}/web/scale`, scaleOf('apps/v1', 'Deployment'))
    assert.equal(other.body.message, 'Deployment in version "v1" cannot be handled as a Scale: converting (v1.Deployment) to (autoscaling.Scale): unknown conversion')
    // An empty apiVersion and kind are the Scale's.
    assert.equal((await api.put(`${DEPLOYMENTS}/web/scale?dryRun=All`, scaleOf('', ''))).status, 200)
    assert.equal((await api.get(`${DEPLOYMENTS}/web`)).body.spec.replicas, 1)
  })

  it('answers a patch adding an unknown field under fieldValidation=Strict with 422, the unknown field quoted', async () => {
    const res = await api.patch(`${CM}/cfg?fieldValidation=Strict`, { colour: 'red' }, MERGE)
    assertInvalidPatch(res, (v) => JSON.parse(v).colour === 'red', 'strict decoding error: unknown field "colour"')
    await unchanged()
  })

  it('still answers a body decoded without a patch (a PUT) with 400', async () => {
    const res = await api.put(`${CM}/cfg`, { metadata: { name: 'cfg' }, data: { a: 1 } })
    assert.equal(res.status, 400)
    assert.equal(res.body.message, 'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string')
    await unchanged()
  })

  it('still applies a patch that fits', async () => {
    const res = await api.patch(`${CM}/cfg?dryRun=All`, { data: { a: '2' } }, MERGE)
    assert.equal(res.status, 200)
    assert.equal(res.body.data.a, '2')
    await unchanged()
  })
})
