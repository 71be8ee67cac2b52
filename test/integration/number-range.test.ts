/**
 * Numbers a Go client could not read back are refused, and nothing is
 * stored: an int64 field's value beyond int64 (JSON or protobuf), and any
 * JSON number beyond float64, which JSON.parse makes Infinity and storage
 * would keep as null. Ordinary numbers are untouched.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { eventually, startServer, type TestClient } from './harness.js'
import { lengthDelimited, varint } from '../helpers/protobuf-wire.js'
import { widgetDefinition } from './crd-fixtures.js'

const PODS = '/api/v1/namespaces/default/pods'
const WIDGETS = '/apis/ex.com/v1/namespaces/default/widgets'
const PROTOBUF = 'application/vnd.kubernetes.protobuf'

const pod = (name: string, grace: string): string =>
  `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"${name}"},"spec":{"terminationGracePeriodSeconds":${grace},"containers":[{"name":"c","image":"i"}]}}`
const widget = (name: string, spec: string): string => `{"apiVersion":"ex.com/v1","kind":"Widget","metadata":{"name":"${name}"},"spec":${spec}}`

const CRD = widgetDefinition('ex.com', {
  type: 'object',
  properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { f: { type: 'number' } } } },
})

const field = lengthDelimited
const text = (n: number, s: string): Buffer => field(n, Buffer.from(s))

/** A Pod named `name` whose spec.terminationGracePeriodSeconds (field 4) is `grace`, in upstream's envelope. */
function protobufPod(name: string, grace: bigint): Uint8Array {
  const spec = Buffer.concat([field(2, Buffer.concat([text(1, 'c'), text(2, 'i')])), varint(4n * 8n), varint(grace)])
  const raw = Buffer.concat([field(1, text(1, name)), field(2, spec)])
  return Buffer.concat([Buffer.from('k8s\0', 'binary'), field(1, Buffer.concat([text(1, 'v1'), text(2, 'Pod')])), field(2, raw)])
}

describe('numbers beyond what is stored', () => {
  let api: TestClient
  before(async () => {
    api = await startServer()
    assert.equal((await api.post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', CRD)).status, 201)
    await eventually('widgets served', async () => (await api.get(WIDGETS)).status === 200)
  })

  async function refused(path: string, body: string | Uint8Array, message: string, contentType = 'application/json'): Promise<void> {
    const r = await api.post(path, body, { headers: { 'content-type': contentType } })
    assert.equal(r.status, 400, r.text)
    assert.equal(r.body.reason, 'BadRequest')
    assert.equal(r.body.message, message)
    assert.deepEqual((await api.get(path)).body.items, [], 'something was stored')
  }

  it('refuses an int64 field beyond int64, in JSON', async () => {
    const words = (literal: string) =>
      `Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number ${literal} into Go struct field PodSpec.spec.terminationGracePeriodSeconds of type int64`
    await refused(PODS, pod('p1', '1e300'), words('1e300'))
    await refused(PODS, pod('p2', '9223372036854775808'), words('9223372036854775808'))
    await refused(PODS, pod('p3', '-9223372036854775808'), words('-9223372036854775808'))
  })

  it('refuses an int64 a double would round, in protobuf', async () => {
    await refused(PODS, protobufPod('p4', 2n ** 63n - 1n), 'unable to decode protobuf body: int64 value 9223372036854775807 cannot be stored exactly', PROTOBUF)
  })

  it('keeps int64 values up to 2^53 exactly', async () => {
    const json = await api.post(PODS, pod('big-json', '9007199254740991'))
    assert.equal(json.status, 201, json.text)
    assert.match((await api.get(`${PODS}/big-json`)).text, /"terminationGracePeriodSeconds":9007199254740991,/)
    const proto = await api.post(PODS, protobufPod('big-proto', 2n ** 53n - 1n), { headers: { 'content-type': PROTOBUF } })
    assert.equal(proto.status, 201, proto.text)
    assert.match((await api.get(`${PODS}/big-proto`)).text, /"terminationGracePeriodSeconds":9007199254740991,/)
    for (const name of ['big-json', 'big-proto']) await api.delete(`${PODS}/${name}?gracePeriodSeconds=0`)
    await eventually('pods gone', async () => (await api.get(PODS)).body.items.length === 0)
  })

  it('refuses a number beyond float64 anywhere in a custom resource', async () => {
    const words = (literal: string) => `Widget in version "v1" cannot be handled as a Widget: json: cannot unmarshal number ${literal} into Go value of type float64`
    await refused(WIDGETS, widget('w1', '{"x":1e400}'), words('1e400'))
    await refused(WIDGETS, widget('w2', '{"f":-1e400}'), words('-1e400'))
    await refused(WIDGETS, widget('w3', '{"x":[1,1e400,-1e400]}'), words('1e400'))
    const long = `1${'0'.repeat(5000)}`
    await refused(WIDGETS, widget('w4', `{"x":${long}}`), words(long))
    await refused(WIDGETS, widget('w5', '{"x":1e99999999999999999999}'), words('1e99999999999999999999'))
    // A body read by the sliced parser (past 64 KiB) is checked as well.
    await refused(WIDGETS, widget('w6', `{"pad":"${'a'.repeat(100_000)}","x":1E+309}`), words('1E+309'))
  })

  it('leaves ordinary numbers, and number-like strings, alone', async () => {
    const spec = '{"f":1.5,"big":1e300,"tiny":1e-400,"neg":-0.25,"int":9007199254740991,"s":"1e400","digest":"sha256:e123e400"}'
    const r = await api.post(WIDGETS, widget('ok', spec))
    assert.equal(r.status, 201, r.text)
    assert.deepEqual((await api.get(`${WIDGETS}/ok`)).body.spec, JSON.parse(spec))
  })
})
