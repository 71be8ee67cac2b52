/**
 * A YAML body whose large collection is written in flow style
 * (`data: {k0: v0, k1: v1, ...}`) is composed in batches of its items on
 * the serving thread, as a block collection is: composed in one piece, a
 * ConfigMap of 100,000 keys held the thread two seconds. The batches are
 * counted (each is one run of the yaml package's Composer); the answers are
 * those of the whole document.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { Composer } from 'yaml'
import { startServer, type TestClient } from './harness.js'

const CMS = '/api/v1/namespaces/default/configmaps'
const YAML = { 'content-type': 'application/yaml' }

const flowMap = (keys: number, value: (i: number) => string = (i) => `v${i}`): string =>
  `{${Array.from({ length: keys }, (_, i) => `k${i % keys}: ${value(i)}`).join(', ')}}`

describe('YAML flow collections of many items', { timeout: 120_000 }, () => {
  let api: TestClient
  let compositions = 0
  const compose = Composer.prototype.compose
  before(async () => {
    api = await startServer()
    Composer.prototype.compose = function* (...args: Parameters<typeof compose>) {
      compositions++
      return yield* compose.apply(this, args)
    }
  })
  after(() => {
    Composer.prototype.compose = compose
  })

  it('creates a ConfigMap of a 100,000-key flow map, composed in batches', async () => {
    compositions = 0
    const created = await api.call('POST', `${CMS}?dryRun=All`, { body: `metadata: {name: flow}\ndata: ${flowMap(100_000)}\n`, headers: YAML })
    assert.equal(created.status, 201, created.text.slice(0, 300))
    assert.equal(Object.keys(created.body.data).length, 100_000)
    assert.equal(created.body.data.k99999, 'v99999')
    assert.ok(compositions >= 1000, `${compositions} compositions`)
  })

  it('creates a Pod whose containers are a flow sequence of flow maps, composed in batches', async () => {
    compositions = 0
    const containers = `[${Array.from({ length: 3000 }, (_, i) => `{name: c${i}, image: "i:${i}", args: [a, b]}`).join(', ')}]`
    const created = await api.call('POST', '/api/v1/namespaces/default/pods?dryRun=All', { body: `metadata: {name: flow}\nspec: {containers: ${containers}}\n`, headers: YAML })
    assert.equal(created.status, 201, created.text.slice(0, 300))
    assert.equal(created.body.spec.containers.length, 3000)
    assert.deepEqual(created.body.spec.containers[2999].args, ['a', 'b'])
    assert.ok(compositions >= 50, `${compositions} compositions`)
  })

  it('warns of keys set twice across batches with their lines, as for the whole document', async () => {
    const body = `metadata: {name: twice}\ndata: {\n${Array.from({ length: 2000 }, (_, i) => `  k${i % 1000}: v${i}`).join(',\n')}\n}\n`
    const created = await api.call('POST', `${CMS}?dryRun=All&fieldValidation=Warn`, { body, headers: YAML })
    assert.equal(created.status, 201, created.text.slice(0, 300))
    assert.equal(created.body.data.k0, 'v1000', 'the last value is kept')
    const warning = created.headers.get('warning') ?? ''
    assert.match(warning, /line 1003: key \\"k0\\" already set in map/)
  })

  it('refuses a flow map closed by the wrong bracket with the words of the whole document', async () => {
    const refused = await api.call('POST', CMS, { body: `metadata: {name: bad}\ndata: ${flowMap(1000).slice(0, -1)}]\n`, headers: YAML })
    assert.equal(refused.status, 400, refused.text.slice(0, 300))
    assert.match(refused.body.message, /Flow map in block collection must be sufficiently indented and end with a \}/)
    assert.equal((await api.get(`${CMS}/bad`)).status, 404)
  })

  it('refuses with 400, not 500, a flow map left open by its indentation whose items overflow the parser', async () => {
    // `data: {` and then one line of 3000 items at column 0: the yaml package's parser recurses once per item.
    const body = `metadata: {name: open}\ndata: {\n${Array.from({ length: 3000 }, (_, i) => `k${i}: v${i}`).join(', ')}\n}\n`
    for (const [method, path, type] of [
      ['POST', CMS, 'application/yaml'],
      ['PATCH', `${CMS}/open?fieldManager=test`, 'application/apply-patch+yaml'],
    ]) {
      const refused = await api.call(method!, path!, { body, headers: { 'content-type': type! } })
      assert.equal(refused.status, 400, refused.text.slice(0, 300))
      assert.match(refused.body.message, /yaml: exceeded max depth of 500$/)
    }
    assert.equal((await api.get(`${CMS}/open`)).status, 404)
  })
})
