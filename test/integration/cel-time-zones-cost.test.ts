/**
 * A timestamp's fields in a time zone (`getHours('America/Los_Angeles')`)
 * cost this runtime some 70 µs a call, which upstream prices at 1: a CRD
 * rule calling one for each pair of 300 items held the thread 6 s within
 * its estimate. Each such call now costs what its work takes, so the rule
 * is cancelled at the per-call limit with 422 and nothing stored, while a
 * rule of a few calls answers as upstream.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { causeLines, startServer, type TestClient } from './harness.js'
import { createServedDefinition, specSchemaDefinition } from './crd-fixtures.js'

const CANCELLED = 'operation cancelled: actual cost limit exceeded'
const PATH = '/apis/zones.example.com/v1/namespaces/default/clocks'

describe('timestamp fields in a time zone', () => {
  let client: TestClient
  before(async () => {
    client = await startServer()
    const spec = {
      type: 'object',
      properties: {
        at: { type: 'string', maxLength: 32 },
        l: { type: 'array', maxItems: 300, items: { type: 'integer' } },
      },
      'x-kubernetes-validations': [{ rule: "self.l.all(i, self.l.all(j, timestamp(self.at).getHours('America/Los_Angeles') >= 0))", message: 'hours' }],
    }
    const crd = specSchemaDefinition('zones.example.com', 'clocks', 'Clock', spec)
    await createServedDefinition(client, crd, PATH)
  })

  const clock = (name: string, items: number) => ({
    apiVersion: 'zones.example.com/v1',
    kind: 'Clock',
    metadata: { name },
    spec: { at: '2020-01-01T00:00:00Z', l: Array.from({ length: items }, (_, i) => i) },
  })

  it('cancels a rule reading them 90,000 times with 422 and the cost limit, and stores nothing', async () => {
    const res = await client.post(PATH, clock('many', 300))
    assert.equal(res.status, 422, res.text.slice(-300))
    assert.deepEqual(causeLines(res), [`spec: Invalid value: "object": '${CANCELLED}': no further validation rules will be run due to call cost exceeds limit for rule: hours`])
    assert.equal((await client.get(`${PATH}/many`)).status, 404)
  })

  it('runs a rule reading them a few hundred times to its result', async () => {
    const res = await client.post(PATH, clock('few', 20))
    assert.equal(res.status, 201, res.text.slice(-300))
  })
})
