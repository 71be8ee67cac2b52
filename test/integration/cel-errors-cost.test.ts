/**
 * Errors a CEL loop absorbs (`l.all(i, 1/0 > 0)` goes on to the end, as
 * cel-go's does) cost this runtime far more than a step: the library
 * quoted the rule's line in each, and took a stack trace. A rule of 90,000
 * such errors behind a long literal held the thread 37 s. Each error now
 * costs a fixed price, with no quote and no trace: the rule is cancelled at
 * the per-call limit with 422 and nothing stored, and a rule of a few
 * errors still answers upstream's message. Likewise format(), whose
 * values each take three units' worth of time here, pays for them.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { causeLines, startServer, type TestClient } from './harness.js'
import { createServedDefinition, specSchemaDefinition } from './crd-fixtures.js'

const CANCELLED = 'operation cancelled: actual cost limit exceeded'
const WAIT_MS = 30_000
/** A literal that puts the loop 90,000 characters into the rule. */
const PADDING = `'${'a'.repeat(90_000)}' != ''`

function definition(plural: string, rule: string): Record<string, unknown> {
  const spec = {
    type: 'object',
    properties: { l: { type: 'array', maxItems: 300, items: { type: 'integer' } } },
    'x-kubernetes-validations': [{ rule, message: 'looped' }],
  }
  return specSchemaDefinition('errors.example.com', plural, `${plural[0]?.toUpperCase()}${plural.slice(1, -1)}`, spec)
}

describe('errors absorbed by CEL loops', () => {
  let client: TestClient
  before(async () => {
    client = await startServer()
  })

  async function install(plural: string, rule: string): Promise<string> {
    const path = `/apis/errors.example.com/v1/namespaces/default/${plural}`
    await createServedDefinition(client, definition(plural, rule), path, WAIT_MS)
    return path
  }

  const object = (kind: string, items: number) => ({
    apiVersion: 'errors.example.com/v1',
    kind,
    metadata: { name: 'looped' },
    spec: { l: Array.from({ length: items }, (_, i) => i) },
  })

  it('cancels a long rule whose loops absorb 90,000 errors with 422 and the cost limit, and stores nothing', async () => {
    const path = await install('paddeds', `${PADDING} && self.l.all(i, self.l.all(j, 1/0 > 0))`)
    const res = await client.post(path, object('Padded', 300))
    assert.equal(res.status, 422, res.text.slice(-300))
    assert.deepEqual(causeLines(res), [`spec: Invalid value: "object": '${CANCELLED}': no further validation rules will be run due to call cost exceeds limit for rule: looped`])
    assert.equal((await client.get(`${path}/looped`)).status, 404)
    assert.equal((await client.get('/readyz')).status, 200)
  })

  it("answers a rule whose loop absorbs a few errors with upstream's message", async () => {
    const path = await install('fews', `${PADDING} && self.l.all(i, 1/0 > 0)`)
    const res = await client.post(path, object('Few', 20))
    assert.equal(res.status, 422, res.text.slice(-300))
    assert.deepEqual(causeLines(res), ['spec: Invalid value: "object": division by zero evaluating rule: looped'])
    assert.equal((await client.get(`${path}/looped`)).status, 404)
  })
})

describe('format() over many values', () => {
  let client: TestClient
  const PATH = '/apis/errors.example.com/v1/namespaces/default/templates'
  before(async () => {
    client = await startServer()
    const spec = {
      type: 'object',
      properties: {
        t: { type: 'string', maxLength: 2000 },
        l: { type: 'array', maxItems: 1000, items: { type: 'integer' } },
      },
      'x-kubernetes-validations': [{ rule: "self.l.all(x, self.t.format(self.l) != '')", message: 'formatted' }],
    }
    const crd = specSchemaDefinition('errors.example.com', 'templates', 'Template', spec)
    await createServedDefinition(client, crd, PATH, WAIT_MS)
  })

  const template = (name: string, values: number) => ({
    apiVersion: 'errors.example.com/v1',
    kind: 'Template',
    metadata: { name },
    spec: { t: '%d'.repeat(values), l: Array.from({ length: values }, (_, i) => i) },
  })

  it('cancels a rule formatting a thousand values a thousand times with 422 and the cost limit, and stores nothing', async () => {
    // At upstream's price, of the template's characters alone, it ran to the end: a third of a second of the thread.
    const res = await client.post(PATH, template('many', 1000))
    assert.equal(res.status, 422, res.text.slice(-300))
    assert.deepEqual(causeLines(res), [`spec: Invalid value: "object": '${CANCELLED}': no further validation rules will be run due to call cost exceeds limit for rule: formatted`])
    assert.equal((await client.get(`${PATH}/many`)).status, 404)
  })

  it('formats a hundred values a hundred times to the end', async () => {
    assert.equal((await client.post(PATH, template('few', 100))).status, 201)
  })
})
