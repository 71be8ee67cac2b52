import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { startServer, type TestClient } from './harness.js'

const DEPLOYMENTS = '/apis/apps/v1/namespaces/default/deployments'
const CONFIGMAPS = '/api/v1/namespaces/default/configmaps'

/** The body of upstream's conformance test: an unknown field, and replicas twice. */
const deploymentText = (name: string) => `{
  "apiVersion": "apps/v1",
  "kind": "Deployment",
  "metadata": {"name": "${name}", "labels": {"app": "nginx"}},
  "spec": {
    "unknownField": "foo",
    "replicas": 2,
    "replicas": 3,
    "selector": {"matchLabels": {"app": "nginx"}},
    "template": {
      "metadata": {"labels": {"app": "nginx"}},
      "spec": {"containers": [{"name": "nginx", "image": "nginx:latest", "colour": "blue"}]}
    }
  }
}`

const warningsOf = (headers: Headers): string[] => (headers.get('warning') ?? '').split(/,\s*(?=299)/).filter(Boolean)

const STRICT_CONFIGMAP = 'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: '

describe('field validation', () => {
  let client: TestClient
  before(async () => {
    client = await startServer()
  })

  it('Strict refuses unknown and duplicate fields with 400, naming each, and stores nothing', async () => {
    const res = await client.post(`${DEPLOYMENTS}?fieldValidation=Strict`, deploymentText('strict'))
    assert.equal(res.status, 400)
    assert.equal(res.body.reason, 'BadRequest')
    assert.equal(
      res.body.message,
      'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.unknownField", unknown field "spec.template.spec.containers[0].colour", duplicate field "spec.replicas"',
    )
    assert.equal((await client.get(`${DEPLOYMENTS}/strict`)).status, 404)
  })

  it('Warn (also the default) stores the object without them and answers a Warning header per problem', async () => {
    for (const [query, name] of [['?fieldValidation=Warn', 'warned'], ['', 'defaulted']] as const) {
      const res = await client.post(`${DEPLOYMENTS}${query}`, deploymentText(name))
      assert.equal(res.status, 201, res.text)
      assert.deepEqual(warningsOf(res.headers), [
        '299 - "unknown field \\"spec.unknownField\\""',
        '299 - "unknown field \\"spec.template.spec.containers[0].colour\\""',
        '299 - "duplicate field \\"spec.replicas\\""',
      ])
      assert.equal(res.body.spec.replicas, 3, 'the last of the duplicates wins')
      assert.equal(res.body.spec.unknownField, undefined)
    }
  })

  /** The problems Strict names in refusing the ConfigMap `name` written as `text`, which is then not stored. */
  const strictProblems = async (name: string, text: string): Promise<string> => {
    const strict = await client.post(`${CONFIGMAPS}?fieldValidation=Strict`, text)
    assert.equal(strict.status, 400)
    assert.equal((await client.get(`${CONFIGMAPS}/${name}`)).status, 404)
    assert.ok(strict.body.message.startsWith(STRICT_CONFIGMAP), strict.body.message)
    return strict.body.message.slice(STRICT_CONFIGMAP.length)
  }

  it("names a field with control characters as Go's %q does, in a refusal and in a warning", async () => {
    const text = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ctl"},"a\\u0007b":1,"c\\u007fd":2,"e\\u000bf":3,"g\\u0001h":4,"i\\u0001h":5,"i\\u0001h":6}'
    assert.equal(
      await strictProblems('ctl', text),
      'unknown field "a\\ab", unknown field "c\\x7fd", unknown field "e\\vf", unknown field "g\\x01h", unknown field "i\\x01h", duplicate field "i\\x01h"',
    )
    const warned = await client.post('/api/v1/namespaces/default/configmaps?fieldValidation=Warn', text)
    assert.equal(warned.status, 201, warned.text)
    assert.equal(warningsOf(warned.headers)[1], '299 - "unknown field \\"c\\\\x7fd\\""')
  })

  it("names a field with unprintable Unicode as Go's %q does: a zero-width space, a no-break space, a soft hyphen", async () => {
    const text = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"unprintable"},"a\\u200bb":1,"c\\u00a0d":2,"e\\u00adf":3,"caf\\u00e9":4}'
    assert.equal(await strictProblems('unprintable', text), 'unknown field "a\\u200bb", unknown field "c\\u00a0d", unknown field "e\\u00adf", unknown field "caf\u00e9"')
  })

  it('sends a field name beyond Latin-1 in its Warning as UTF-8 bytes, as Go writes headers', async () => {
    const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'euro' }, data: { a: 'b' }, 'pri€e': 1 }
    const res = await client.post('/api/v1/namespaces/default/configmaps', body)
    assert.equal(res.status, 201, res.text)
    const warning = res.headers.get('warning') ?? ''
    assert.equal(Buffer.from(warning, 'latin1').toString('utf8'), '299 - "unknown field \\"pri€e\\""')
  })

  it('stores an object whose unknown field name is long and beyond Latin-1, with its Warning, not a 500', async () => {
    const field = `pri€e-${'x'.repeat(200_000)}`
    const res = await client.post(`${CONFIGMAPS}?fieldValidation=Warn`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'long-field' }, data: { a: 'b' }, [field]: 1 })
    assert.equal(res.status, 201, res.text.slice(0, 300))
    const warning = Buffer.from(res.headers.get('warning') ?? '', 'latin1').toString('utf8')
    assert.ok(warning.startsWith('299 - "unknown field \\"pri€e-xxxx'), warning.slice(0, 100))
    assert.equal((await client.get(`${CONFIGMAPS}/long-field`)).status, 200)
  })

  it('warns of thousands of unknown fields in no more than 4096 characters of Warning headers, the first ones in order, as upstream', async () => {
    const unknown = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`field${i}`, i]))
    const res = await client.post(`${CONFIGMAPS}?fieldValidation=Warn`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'many-fields' }, data: { a: 'b' }, ...unknown })
    assert.equal(res.status, 201, res.text.slice(0, 300))
    const texts = warningsOf(res.headers).map((w) => JSON.parse(w.slice('299 - '.length)) as string)
    assert.ok(texts.length > 100 && texts.length < 2000, `${texts.length} warnings`)
    assert.deepEqual(texts.slice(0, 3), ['unknown field "field0"', 'unknown field "field1"', 'unknown field "field2"'])
    const characters = texts.reduce((n, t) => n + t.length, 0)
    assert.ok(characters <= 4096 + 256, `${characters} characters of warnings`)
  })

  it('Ignore drops them silently', async () => {
    const res = await client.post(`${DEPLOYMENTS}?fieldValidation=Ignore`, deploymentText('ignored'))
    assert.equal(res.status, 201, res.text)
    assert.equal(res.headers.get('warning'), null)
  })

  it('refuses an unknown mode with 400', async () => {
    const res = await client.post(`${CONFIGMAPS}?fieldValidation=Loose`, { metadata: { name: 'x' } })
    assert.equal(res.status, 400)
    assert.equal(res.body.message, 'fieldValidation: Unsupported value: "Loose": supported values: "Ignore", "Strict", "Warn"')
  })

  it('checks the result of a merge patch and the body of an update, metadata included', async () => {
    assert.equal((await client.post(CONFIGMAPS, { metadata: { name: 'cm' }, data: { a: '1' } })).status, 201)
    const patched = await client.patch(`${CONFIGMAPS}/cm?fieldValidation=Strict`, '{"datum": {"b": "2"}}', 'application/merge-patch+json')
    // A patch's result is refused as upstream's patch handler refuses it: 422 on the field `patch`.
    assert.equal(patched.status, 422)
    assert.equal(patched.body.reason, 'Invalid')
    assert.match(patched.body.message, /^ "" is invalid: patch: Invalid value: ".*\\"datum\\":\{\\"b\\":\\"2\\"\}.*": strict decoding error: unknown field "datum"$/)
    const current = (await client.get(`${CONFIGMAPS}/cm`)).body
    const put = await client.put(`${CONFIGMAPS}/cm?fieldValidation=Strict`, { ...current, metadata: { ...current.metadata, unknownMeta: 'x' } })
    assert.equal(put.status, 400)
    assert.match(put.body.message, /strict decoding error: unknown field "metadata.unknownMeta"$/)
    assert.deepEqual((await client.get(`${CONFIGMAPS}/cm`)).body.data, { a: '1' }, 'nothing changed')
  })

  // Upstream decodes every body into its kind's struct, so a field the kind does not have is never kept, at the top
  // level as anywhere else: an update or a patch that sends one keeps the object as it was (and, with no other change,
  // writes nothing).
  it('keeps no unknown top-level field through a PUT or any patch, warning of each', async () => {
    const created = await client.post(CONFIGMAPS, { metadata: { name: 'top' }, data: { a: '1' } })
    assert.equal(created.status, 201)
    const put = await client.put(`${CONFIGMAPS}/top`, { ...created.body, junk: 'x', data: { a: '2' } })
    assert.equal(put.status, 200, put.text)
    assert.deepEqual(warningsOf(put.headers), ['299 - "unknown field \\"junk\\""'])
    const patches: [string, string][] = [
      ['application/merge-patch+json', '{"junk2":"y","data":{"a":"3"}}'],
      ['application/strategic-merge-patch+json', '{"junk3":"z","data":{"a":"4"}}'],
      ['application/json-patch+json', '[{"op":"add","path":"/junk4","value":"w"},{"op":"replace","path":"/data/a","value":"5"}]'],
    ]
    for (const [type, patch] of patches) assert.equal((await client.patch(`${CONFIGMAPS}/top`, patch, type)).status, 200)
    const stored = (await client.get(`${CONFIGMAPS}/top`)).body
    assert.deepEqual(Object.keys(stored), ['kind', 'apiVersion', 'metadata', 'data'])
    assert.deepEqual(stored.data, { a: '5' })
    const unchanged = await client.put(`${CONFIGMAPS}/top`, { ...stored, junk: 'x' })
    assert.equal(unchanged.status, 200)
    assert.equal(unchanged.body.metadata.resourceVersion, stored.metadata.resourceVersion, 'an unknown field alone changes nothing')
  })

  it('reports duplicate keys of a YAML body in the YAML decoder’s words', async () => {
    const yaml = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  a: "1"\n  a: "2"\n'
    const strict = await client.post(`${CONFIGMAPS}?fieldValidation=Strict`, yaml, { headers: { 'content-type': 'application/yaml' } })
    assert.equal(strict.status, 400)
    assert.equal(
      strict.body.message,
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: yaml: unmarshal errors:\n  line 7: key "a" already set in map',
    )
    const ignored = await client.post(`${CONFIGMAPS}?fieldValidation=Ignore`, yaml, { headers: { 'content-type': 'application/yaml' } })
    assert.equal(ignored.status, 201, ignored.text)
    assert.deepEqual(ignored.body.data, { a: '2' })
  })
})
