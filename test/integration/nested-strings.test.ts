/**
 * JSON that travels inside a string or bytes of a body, where the body's own
 * depth check does not see it: a FieldsV1 key's value, the annotations an
 * autoscaling/v1 HorizontalPodAutoscaler keeps its v2 fields in, a protobuf
 * RawExtension, the last-applied-configuration annotation kubectl's first
 * server-side apply reads. Each is held to the nesting bound of any decoded
 * value (MAX_NESTING_DEPTH) before it is parsed. Nested thousands of levels
 * deep, all but the RawExtension answered 500 (a walk overflowed its
 * stack); the RawExtension held the thread a quarter of a second and more
 * in V8's parser before its 400.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { nestsDeeperThan } from '../../core/machinery/limits.js'
import { installDefinition, widgetDefinition } from './crd-fixtures.js'
import { startServer, type TestClient } from './harness.js'

const PODS = '/api/v1/namespaces/default/pods'
const CM = '/api/v1/namespaces/default/configmaps'
const HPA_V1 = '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers'
const HPA_V2 = '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers'
const REVISIONS = '/apis/apps/v1/namespaces/default/controllerrevisions'

const deepArray = (depth: number) => '['.repeat(depth) + ']'.repeat(depth)
const deepObject = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)

function managedEntry(operation: string, fieldsV1: string): string {
  return `[{"manager":"crafted","operation":"${operation}","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":${fieldsV1}}]`
}

describe('FieldsV1 keys whose value nests thousands of levels', () => {
  let api: TestClient
  before(async () => {
    api = await startServer()
  })

  it('creates a pod whose managedFields name a container by a key nested 5000 levels deep, as with any unreadable entry', async () => {
    const key = JSON.stringify(`k:{"name":${deepArray(5000)}}`)
    const fields = `{"f:spec":{"f:containers":{${key}:{}}}}`
    const body = `{"metadata":{"name":"deep-key","managedFields":${managedEntry('Update', fields)}},"spec":{"containers":[{"name":"c","image":"i"}]}}`
    const created = await api.post(PODS, body)
    assert.equal(created.status, 201, created.text.slice(0, 300))
    const stored = await api.get(`${PODS}/deep-key`)
    assert.equal(stored.status, 200)
    const managers = stored.body.metadata.managedFields.map((e: { manager: string }) => e.manager)
    assert.ok(!managers.includes('crafted'), `the unreadable entry is not kept: ${managers}`)
    assert.ok(!nestsDeeperThan(stored.body, 50))
  })

  it('updates a ConfigMap whose managedFields name a finalizer by a value nested 5000 levels deep, and applies to it after', async () => {
    assert.equal((await api.post(CM, { metadata: { name: 'deep-value', finalizers: ['example.com/f'] } })).status, 201)
    const key = JSON.stringify(`v:${deepArray(5000)}`)
    const fields = `{"f:metadata":{"f:finalizers":{${key}:{}}}}`
    const body = `{"metadata":{"name":"deep-value","finalizers":["example.com/f"],"managedFields":${managedEntry('Apply', fields)}},"data":{"a":"b"}}`
    const updated = await api.put(`${CM}/deep-value`, body)
    assert.equal(updated.status, 200, updated.text.slice(0, 300))
    assert.ok(!updated.body.metadata.managedFields.some((e: { manager: string }) => e.manager === 'crafted'))
    const applied = await api.patch(
      `${CM}/deep-value?fieldManager=tool`,
      JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'deep-value' }, data: { c: 'd' } }),
      'application/apply-patch+yaml',
    )
    assert.equal(applied.status, 200, applied.text.slice(0, 300))
    assert.deepEqual((await api.get(`${CM}/deep-value`)).body.data, { a: 'b', c: 'd' })
  })
})

describe('autoscaling/v1 annotations nested thousands of levels', () => {
  let api: TestClient
  before(async () => {
    api = await startServer()
  })

  const hpa = (name: string, annotations: Record<string, string>) => ({
    metadata: { name, annotations },
    spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 3 },
  })

  for (const annotation of ['metrics', 'current-metrics', 'conditions', 'behavior']) {
    it(`creates an autoscaler whose ${annotation} annotation nests 5000 levels deep, and stores nothing of that depth`, async () => {
      const name = `deep-${annotation}`
      // A status's type is any name: one this conversion does not know is carried whole.
      const type = annotation === 'metrics' ? 'Pods' : 'Custom'
      const value = annotation === 'behavior' ? `{"scaleUp":{"extra":${deepObject(5000)}}}` : `[{"type":"${type}","extra":${deepArray(5000)}}]`
      const created = await api.post(HPA_V1, hpa(name, { [`autoscaling.alpha.kubernetes.io/${annotation}`]: value }))
      assert.equal(created.status, 201, created.text.slice(0, 300))
      for (const path of [`${HPA_V1}/${name}`, `${HPA_V2}/${name}`]) {
        const stored = await api.get(path)
        assert.equal(stored.status, 200, stored.text.slice(0, 300))
        assert.ok(!nestsDeeperThan(stored.body, 50), path)
        assert.ok(!stored.text.includes('[[[['), path)
      }
    })
  }

  it('still carries the annotations it can read', async () => {
    const metrics = '[{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"10"}}]'
    const created = await api.post(HPA_V1, hpa('readable', { 'autoscaling.alpha.kubernetes.io/metrics': metrics }))
    assert.equal(created.status, 201, created.text.slice(0, 300))
    const v2 = await api.get(`${HPA_V2}/readable`)
    assert.deepEqual(v2.body.spec.metrics, [{ type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '10' } } }])
  })
})

/** Protobuf's length-delimited field: its key, its length, its bytes. */
function field(number: number, bytes: Uint8Array): Uint8Array {
  const head: number[] = [(number << 3) | 2]
  for (let n = bytes.length; ; n = Math.floor(n / 128)) {
    if (n < 128) {
      head.push(n)
      break
    }
    head.push((n & 127) | 128)
  }
  const out = new Uint8Array(head.length + bytes.length)
  out.set(head)
  out.set(bytes, head.length)
  return out
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}

const utf8 = (text: string) => new TextEncoder().encode(text)

/** A ControllerRevision in protobuf's envelope whose data (a RawExtension) holds `json`. */
function revisionWithData(name: string, json: string): Uint8Array {
  const meta = field(1, field(1, utf8(name)))
  const data = field(2, field(1, utf8(json)))
  const revision = Uint8Array.from([3 << 3, 1])
  const typeMeta = field(1, concat(field(1, utf8('apps/v1')), field(2, utf8('ControllerRevision'))))
  return concat(utf8('k8s\0'), typeMeta, field(2, concat(meta, data, revision)))
}

describe('a protobuf RawExtension of JSON nested a million levels', () => {
  let api: TestClient
  const parse = JSON.parse
  let parsedLengths: number[] = []
  before(async () => {
    api = await startServer()
    JSON.parse = ((text: string, reviver?: (key: string, value: unknown) => unknown) => {
      parsedLengths.push(text.length)
      return parse(text, reviver)
    }) as typeof JSON.parse
  })
  after(() => {
    JSON.parse = parse
  })

  it('refuses it with 400 before parsing it, and stores nothing', async () => {
    const json = deepArray(1_000_000)
    parsedLengths = []
    const res = await api.call('POST', REVISIONS, { body: revisionWithData('deep', json), headers: { 'content-type': 'application/vnd.kubernetes.protobuf' } })
    assert.equal(res.status, 400, res.text.slice(0, 300))
    assert.equal(res.body.message, 'unable to decode protobuf body: exceeded max depth of 500')
    assert.ok(!parsedLengths.includes(json.length), 'the nested text never reaches the parser')
    assert.equal((await api.get(`${REVISIONS}/deep`)).status, 404)
  })

  it('creates a revision whose data nests within the bound', async () => {
    const res = await api.call('POST', REVISIONS, {
      body: revisionWithData('shallow', '{"spec":{"template":{"a":[1,2]}}}'),
      headers: { 'content-type': 'application/vnd.kubernetes.protobuf' },
    })
    assert.equal(res.status, 201, res.text.slice(0, 300))
    assert.deepEqual((await api.get(`${REVISIONS}/shallow`)).body.data, { spec: { template: { a: [1, 2] } } })
  })
})

describe('a last-applied-configuration nested thousands of levels', () => {
  const GROUP = 'nested.example.com'
  const WIDGETS = `/apis/${GROUP}/v1/namespaces/default/widgets`
  let api: TestClient
  before(async () => {
    api = await startServer()
    await installDefinition(api, widgetDefinition(GROUP, { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }))
  })

  const widget = (name: string, spec: unknown) => ({ apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name }, spec })

  it("answers kubectl's conflicting apply with the conflict, as for an annotation it cannot read", async () => {
    const recorded = `{"apiVersion":"${GROUP}/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"x":"a","y":${deepObject(5000)}}}`
    const created = await api.post(`${WIDGETS}?fieldManager=kubectl-client-side-apply`, {
      ...widget('w', { x: 'a', y: { a: 1 } }),
      metadata: { name: 'w', annotations: { 'kubectl.kubernetes.io/last-applied-configuration': recorded } },
    })
    assert.equal(created.status, 201, created.text.slice(0, 300))
    const applied = await api.patch(`${WIDGETS}/w?fieldManager=kubectl`, JSON.stringify(widget('w', { x: 'b' })), 'application/apply-patch+yaml')
    assert.equal(applied.status, 409, applied.text.slice(0, 300))
    assert.equal(applied.body.message, 'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using nested.example.com/v1: .spec.x')
    assert.equal((await api.get(`${WIDGETS}/w`)).body.spec.x, 'a')
  })

  it('still lets kubectl take over what a readable annotation records', async () => {
    const recorded = `{"apiVersion":"${GROUP}/v1","kind":"Widget","metadata":{"name":"v"},"spec":{"x":"a"}}`
    const created = await api.post(`${WIDGETS}?fieldManager=kubectl-client-side-apply`, {
      ...widget('v', { x: 'a' }),
      metadata: { name: 'v', annotations: { 'kubectl.kubernetes.io/last-applied-configuration': recorded } },
    })
    assert.equal(created.status, 201, created.text.slice(0, 300))
    const applied = await api.patch(`${WIDGETS}/v?fieldManager=kubectl`, JSON.stringify(widget('v', { x: 'b' })), 'application/apply-patch+yaml')
    assert.equal(applied.status, 200, applied.text.slice(0, 300))
    assert.equal(applied.body.spec.x, 'b')
  })
})
