/**
 * A LIST answered as YAML is written an item at a time, other requests
 * served between the items: written at once, a list of 3,000 ConfigMaps
 * held the thread half a second, for one GET any reader may send again and
 * again. So is one large object: a ConfigMap of 40,000 keys held it 0.3 s.
 * The text is the same as written at once.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { apiListYamlInSteps, apiObjectYaml, apiObjectYamlInSteps } from '../../core/encoding/go-yaml.js'
import { decodeProtobuf } from '../../core/encoding/protobuf.js'
import { runCounting } from '../fixtures/checkpoints.js'
import { besideAGet, startServer, type TestClient } from './harness.js'

const CM = '/api/v1/namespaces/default/configmaps'
const COUNT = 1500
const YAML = { accept: 'application/yaml' }

describe('LISTs answered as YAML', { timeout: 120_000 }, () => {
  let api: TestClient
  before(async () => {
    api = await startServer()
    for (let i = 0; i < COUNT; i++) {
      const data = { text: 'word '.repeat(40), lines: 'a\nb\n  c', number: '1.5', bool: 'on', empty: '' }
      const made = await api.post(CM, { metadata: { name: `cm-${i}`, labels: { app: 'yes' } }, data })
      assert.equal(made.status, 201, made.text.slice(0, 300))
    }
  })
  after(async () => {
    await api.server.shutdown()
  })

  it(`writes ${COUNT} ConfigMaps as the list written at once would be, serving a GET meanwhile`, async () => {
    const { answer, order } = await besideAGet(api, () => api.get(CM, { headers: YAML }))
    assert.equal(answer.status, 200)
    assert.equal(answer.headers.get('content-type'), 'application/yaml')
    const json = await api.get(CM)
    assert.equal(answer.text, apiObjectYaml(json.body))
    assert.match(answer.text, /^apiVersion: v1\nitems:\n- data:\n {4}bool: "on"\n/)
    assert.deepEqual(order, ['get', 'request'], 'the GET waited for the whole list')
  })

  it('checkpoints at least once per item', async () => {
    const json = await api.get(CM)
    const { value, checkpoints } = runCounting(apiListYamlInSteps(json.body))
    assert.ok(checkpoints >= COUNT, `${checkpoints} checkpoints for ${COUNT} items`)
    assert.equal(value, apiObjectYaml(json.body))
  })

  it('writes a short list and an empty one as before', async () => {
    const short = await api.get(`${CM}?limit=2`, { headers: YAML })
    assert.equal(short.status, 200)
    assert.match(short.text, /^apiVersion: v1\nitems:\n- data:\n/)
    assert.match(short.text, /\nkind: ConfigMapList\nmetadata:\n {2}continue: /)
    const empty = await api.get('/api/v1/namespaces/default/secrets', { headers: YAML })
    assert.equal(empty.status, 200)
    assert.match(empty.text, /^apiVersion: v1\nitems: \[\]\nkind: SecretList\n/)
  })
})

describe('one large object answered as YAML or protobuf', { timeout: 120_000 }, () => {
  let api: TestClient
  const KEYS = 40_000
  before(async () => {
    api = await startServer()
    const data: Record<string, string> = {}
    for (let i = 0; i < KEYS; i++) data[`key-${i}`] = i % 2 === 0 ? `value ${i}` : 'yes'
    const made = await api.post(CM, { metadata: { name: 'wide' }, data })
    assert.equal(made.status, 201, made.text.slice(0, 300))
  })
  after(async () => {
    await api.server.shutdown()
  })

  it(`writes a ConfigMap of ${KEYS} keys as written at once, serving a GET meanwhile`, async () => {
    const { answer, order } = await besideAGet(api, () => api.get(`${CM}/wide`, { headers: YAML }))
    assert.equal(answer.status, 200)
    assert.equal(answer.headers.get('content-type'), 'application/yaml')
    const json = await api.get(`${CM}/wide`)
    assert.equal(answer.text, apiObjectYaml(json.body))
    assert.match(answer.text, /\ndata:\n {2}key-0: value 0\n {2}key-1: "yes"\n {2}key-2: value 2\n/)
    assert.deepEqual(order, ['get', 'request'], 'the GET waited for the whole object')
  })

  it(`writes a ConfigMap of ${KEYS} keys as protobuf in steps too, serving a GET meanwhile`, async () => {
    const PROTOBUF = { accept: 'application/vnd.kubernetes.protobuf' }
    const { answer, order } = await besideAGet(api, () => api.server.fetch(new Request(`http://in-process${CM}/wide`, { headers: PROTOBUF })))
    assert.equal(answer.status, 200)
    const decoded = decodeProtobuf(new Uint8Array(await answer.arrayBuffer())) as { data: Record<string, string> }
    assert.equal(Object.keys(decoded.data).length, KEYS)
    assert.equal(decoded.data['key-1'], 'yes')
    assert.deepEqual(order, ['get', 'request'], 'the GET waited for the whole object')
  })

  it('checkpoints all along the object, and hardly at all for an object of ordinary size', async () => {
    const wide = await api.get(`${CM}/wide`)
    assert.ok(runCounting(apiObjectYamlInSteps(wide.body)).checkpoints >= KEYS / 4096)
    const small = await api.post(CM, { metadata: { name: 'small' }, data: { a: 'b' } })
    // The JSON writer's count of values is the thread's, so a small object may meet its one checkpoint.
    assert.ok(runCounting(apiObjectYamlInSteps(small.body)).checkpoints <= 1)
  })
})
