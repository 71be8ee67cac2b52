/**
 * A CRD rule whose arithmetic passes int64 fails as in cel-go, with
 * `integer overflow` in the 422 and nothing stored, where the library
 * computed `-9223372036854775808 / -1` as 9223372036854775808 (a value no
 * int holds) and `-9223372036854775808 % -1` as 0, and admitted the object.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { causeLines, startServer, type TestClient } from './harness.js'
import { createServedDefinition, specSchemaDefinition } from './crd-fixtures.js'

const PATH = '/apis/math.example.com/v1/namespaces/default/ratios'

describe('int64 overflow in CRD rules', () => {
  let client: TestClient
  before(async () => {
    client = await startServer()
    const spec = {
      type: 'object',
      properties: { a: { type: 'integer' }, b: { type: 'integer' }, u: { type: 'integer' } },
      'x-kubernetes-validations': [
        { rule: 'self.a / self.b != 0 && self.a % self.b >= 0', message: 'ratio' },
        { rule: '!has(self.u) || uint(self.u) >= 0u', message: 'unsigned' },
      ],
    }
    const crd = specSchemaDefinition('math.example.com', 'ratios', 'Ratio', spec)
    await createServedDefinition(client, crd, PATH)
  })

  const ratio = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'math.example.com/v1', kind: 'Ratio', metadata: { name }, spec })

  it('refuses the smallest int over -1 with integer overflow, and stores nothing', async () => {
    // The smallest int64 in JSON: as a literal, since no JavaScript number holds it exactly.
    const body = JSON.stringify(ratio('min', { a: 0, b: -1 })).replace('"a":0', '"a":-9223372036854775808')
    const res = await client.post(PATH, body)
    assert.equal(res.status, 422, res.text.slice(-300))
    assert.deepEqual(causeLines(res), ['spec: Invalid value: "object": integer overflow evaluating rule: ratio'])
    assert.equal((await client.get(`${PATH}/min`)).status, 404)
  })

  it('refuses a negative int made unsigned with unsigned integer overflow', async () => {
    const res = await client.post(PATH, ratio('neg', { a: 6, b: 3, u: -1 }))
    assert.equal(res.status, 422, res.text.slice(-300))
    assert.deepEqual(causeLines(res), ['spec: Invalid value: "object": unsigned integer overflow evaluating rule: unsigned'])
    assert.equal((await client.get(`${PATH}/neg`)).status, 404)
  })

  it('admits arithmetic within range', async () => {
    const res = await client.post(PATH, ratio('fine', { a: 6, b: -1, u: 2 }))
    assert.equal(res.status, 201, res.text.slice(-300))
  })
})
