/**
 * DeleteOptions where clients put them: in the body (JSON, YAML, protobuf),
 * as kubectl and client-go do, or in the query; both together when they agree.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { encodeProtobuf } from '../../core/encoding/protobuf.js'
import { startServer, type TestClient } from './harness.js'

const CMS = '/api/v1/namespaces/default/configmaps'
const PODS = '/api/v1/namespaces/default/pods'
const PROTOBUF = 'application/vnd.kubernetes.protobuf'

async function server(): Promise<TestClient> {
  // What a DELETE itself stores: no garbage collector acting on the finalizers meanwhile.
  return startServer({ garbageCollector: false })
}

async function createConfigMap(api: TestClient, name: string, labels: Record<string, string> = {}) {
  const res = await api.post(CMS, { metadata: { name, labels }, data: { k: 'v' } })
  assert.equal(res.status, 201, res.text)
  return res.body
}

/** The stored object, unchanged since `before`. */
async function assertUnchanged(api: TestClient, path: string, before: unknown) {
  const now = await api.get(path)
  assert.equal(now.status, 200, `${path} is still stored`)
  assert.deepEqual(now.body, before)
}

describe('dryRun in a DeleteOptions body', () => {
  let api: TestClient
  before(async () => {
    api = await server()
  })

  it('keeps the object for a JSON body, answering as if it were deleted', async () => {
    const cm = await createConfigMap(api, 'json')
    const res = await api.delete(`${CMS}/json`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', dryRun: ['All'] } })
    assert.equal(res.status, 200, res.text)
    assert.equal(res.body.status, 'Success')
    assert.equal(res.body.details.name, 'json')
    await assertUnchanged(api, `${CMS}/json`, cm)
  })

  it('keeps the object for a YAML body', async () => {
    const cm = await createConfigMap(api, 'yaml')
    const res = await api.delete(`${CMS}/yaml`, {
      body: 'kind: DeleteOptions\napiVersion: v1\ndryRun:\n- All\n',
      headers: { 'content-type': 'application/yaml' },
    })
    assert.equal(res.status, 200, res.text)
    await assertUnchanged(api, `${CMS}/yaml`, cm)
  })

  it('keeps the object for a protobuf body', async () => {
    const cm = await createConfigMap(api, 'proto')
    const body = encodeProtobuf({ apiVersion: 'v1', kind: 'DeleteOptions', dryRun: ['All'] })
    const res = await api.delete(`${CMS}/proto`, { body, headers: { 'content-type': PROTOBUF } })
    assert.equal(res.status, 200, res.text)
    await assertUnchanged(api, `${CMS}/proto`, cm)
  })

  it('keeps every object of a deletecollection, in each encoding', async () => {
    const a = await createConfigMap(api, 'coll-a', { set: 'coll' })
    const b = await createConfigMap(api, 'coll-b', { set: 'coll' })
    const bodies: { body: unknown; type: string }[] = [
      { body: { dryRun: ['All'] }, type: 'application/json' },
      { body: 'dryRun: [All]\n', type: 'application/yaml' },
      { body: encodeProtobuf({ apiVersion: 'v1', kind: 'DeleteOptions', dryRun: ['All'] }), type: PROTOBUF },
    ]
    for (const { body, type } of bodies) {
      const res = await api.delete(`${CMS}?labelSelector=set%3Dcoll`, { body, headers: { 'content-type': type } })
      assert.equal(res.status, 200, res.text)
      assert.deepEqual(res.body.items.map((i: { metadata: { name: string } }) => i.metadata.name).sort(), ['coll-a', 'coll-b'])
    }
    await assertUnchanged(api, `${CMS}/coll-a`, a)
    await assertUnchanged(api, `${CMS}/coll-b`, b)
  })

  it('takes a dry run from the query beside a body that does not name one', async () => {
    const cm = await createConfigMap(api, 'mixed')
    const res = await api.delete(`${CMS}/mixed?dryRun=All`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' } })
    assert.equal(res.status, 200, res.text)
    await assertUnchanged(api, `${CMS}/mixed`, cm)
  })

  it('refuses a dry run directive other than All in the body with 422, and keeps the object', async () => {
    const cm = await createConfigMap(api, 'bad-dry')
    const res = await api.delete(`${CMS}/bad-dry`, { body: { dryRun: ['Some'] } })
    assert.equal(res.status, 422)
    assert.equal(res.body.message, 'DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Some"}: supported values: "All"')
    assert.deepEqual(res.body.details.causes, [
      { reason: 'FieldValueNotSupported', message: 'Unsupported value: []string{"Some"}: supported values: "All"', field: 'dryRun' },
    ])
    await assertUnchanged(api, `${CMS}/bad-dry`, cm)
  })
})

describe('the other DeleteOptions fields from a body or the query', () => {
  it('reads propagationPolicy from a YAML body and from a protobuf body', async () => {
    const api = await server()
    await createConfigMap(api, 'y')
    const yaml = await api.delete(`${CMS}/y`, { body: 'propagationPolicy: Orphan\n', headers: { 'content-type': 'application/yaml' } })
    assert.equal(yaml.status, 200, yaml.text)
    assert.deepEqual(yaml.body.metadata.finalizers, ['orphan'])
    await createConfigMap(api, 'p')
    const body = encodeProtobuf({ apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Foreground' })
    const proto = await api.delete(`${CMS}/p`, { body, headers: { 'content-type': PROTOBUF } })
    assert.equal(proto.status, 200, proto.text)
    assert.deepEqual(proto.body.metadata.finalizers, ['foregroundDeletion'])
  })

  it('reads preconditions and gracePeriodSeconds from a protobuf body', async () => {
    const api = await server()
    const cm = await createConfigMap(api, 'c')
    const wrong = encodeProtobuf({ apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: 'other' } })
    const refused = await api.delete(`${CMS}/c`, { body: wrong, headers: { 'content-type': PROTOBUF } })
    assert.equal(refused.status, 409)
    assert.equal(refused.body.message, `Operation cannot be fulfilled on configmaps "c": Precondition failed: UID in precondition: other, UID in object meta: ${cm.metadata.uid}`)
    await assertUnchanged(api, `${CMS}/c`, cm)
    const right = encodeProtobuf({ apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: cm.metadata.uid, resourceVersion: cm.metadata.resourceVersion } })
    const ok = await api.delete(`${CMS}/c`, { body: right, headers: { 'content-type': PROTOBUF } })
    assert.equal(ok.status, 200, ok.text)
    assert.equal((await api.get(`${CMS}/c`)).status, 404)

    const pod = await api.post(PODS, { metadata: { name: 'p' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'nginx' }] } })
    assert.equal(pod.status, 201, pod.text)
    const now = encodeProtobuf({ apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0 })
    const gone = await api.delete(`${PODS}/p`, { body: now, headers: { 'content-type': PROTOBUF } })
    assert.equal(gone.status, 200, gone.text)
    assert.equal(gone.body.kind, 'Status')
    assert.equal((await api.get(`${PODS}/p`)).status, 404)
  })

  it('takes a DeleteOptions of any group version, as clients send their own group', async () => {
    const api = await server()
    await createConfigMap(api, 'c')
    const res = await api.delete(`${CMS}/c`, { body: { kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1', propagationPolicy: 'Orphan' } })
    assert.equal(res.status, 200, res.text)
    assert.deepEqual(res.body.metadata.finalizers, ['orphan'])
  })

  it('reads orphanDependents from the query as upstream reads booleans', async () => {
    const api = await server()
    await createConfigMap(api, 'c', {})
    const res = await api.delete(`${CMS}/c?orphanDependents=yes`)
    assert.equal(res.status, 200, res.text)
    assert.deepEqual(res.body.metadata.finalizers, ['orphan'])
  })

  it('refuses a body and a query that disagree with 400, and keeps the object', async () => {
    const api = await server()
    const cm = await createConfigMap(api, 'c')
    const grace = await api.delete(`${CMS}/c?gracePeriodSeconds=30`, { body: { gracePeriodSeconds: 0 } })
    assert.equal(grace.status, 400)
    assert.equal(grace.body.reason, 'BadRequest')
    assert.equal(grace.body.message, 'DeleteOptions disagree: gracePeriodSeconds is 0 in the request body and 30 in the query')
    const dry = await api.delete(`${CMS}/c?dryRun=All`, { body: { dryRun: [] } })
    assert.equal(dry.status, 200, 'an empty list in the body says nothing')
    const policy = await api.delete(`${CMS}/c?propagationPolicy=Orphan`, { body: { propagationPolicy: 'Background' } })
    assert.equal(policy.status, 400)
    assert.equal(policy.body.message, 'DeleteOptions disagree: propagationPolicy is "Background" in the request body and "Orphan" in the query')
    await assertUnchanged(api, `${CMS}/c`, cm)
  })

  it('refuses orphanDependents in the body with a propagationPolicy in the query (422), and keeps the object', async () => {
    const api = await server()
    const cm = await createConfigMap(api, 'c')
    const res = await api.delete(`${CMS}/c?propagationPolicy=Foreground`, { body: { orphanDependents: false } })
    assert.equal(res.status, 422)
    assert.equal(
      res.body.message,
      'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Foreground": orphanDependents and deletionPropagation cannot be both set',
    )
    const all = await api.delete(`${CMS}?propagationPolicy=Sideways`)
    assert.equal(all.status, 422, 'a deletecollection checks its options before it lists')
    await assertUnchanged(api, `${CMS}/c`, cm)
  })

  it('refuses a body of another kind, a value of the wrong type and a bad query number with 400, and keeps the object', async () => {
    const api = await server()
    const cm = await createConfigMap(api, 'c')
    const kind = await api.delete(`${CMS}/c`, { body: { kind: 'Pod', apiVersion: 'v1' } })
    assert.equal(kind.status, 400)
    assert.match(kind.body.message, /^no kind "Pod" is registered for version "v1" in scheme /)
    const typed = await api.delete(`${CMS}/c`, { body: { gracePeriodSeconds: 'soon' } })
    assert.equal(typed.status, 400)
    assert.equal(
      typed.body.message,
      'DeleteOptions in version "v1" cannot be handled as a DeleteOptions: json: cannot unmarshal string into Go struct field DeleteOptions.gracePeriodSeconds of type int64',
    )
    const list = await api.delete(`${CMS}/c`, { body: ['All'] })
    assert.equal(list.status, 400)
    assert.match(list.body.message, /^couldn't get version\/kind; json parse error: json: cannot unmarshal array/)
    // Go's decoder names a boolean `bool`.
    const bool = await api.delete(`${CMS}/c`, { body: true })
    assert.equal(bool.status, 400)
    assert.match(bool.body.message, /^couldn't get version\/kind; json parse error: json: cannot unmarshal bool into Go value of type struct/)
    const query = await api.delete(`${CMS}/c?gracePeriodSeconds=soon`)
    assert.equal(query.status, 400)
    assert.equal(query.body.message, 'strconv.ParseInt: parsing "soon": invalid syntax')
    const yaml = await api.delete(`${CMS}/c`, { body: 'dryRun: [All', headers: { 'content-type': 'application/yaml' } })
    assert.equal(yaml.status, 400)
    await assertUnchanged(api, `${CMS}/c`, cm)
  })
})
