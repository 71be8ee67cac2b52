/**
 * A CRD rule's messageExpression formatting values with format() reads as
 * cel-go writes them, and so does string(): a double as Go's %g (`2e+06`), a list's
 * strings quoted, a duration in seconds. The object is refused with that
 * message, and nothing is stored.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { causeLines, startServer, type TestClient } from './harness.js'
import { createServedDefinition, specSchemaDefinition } from './crd-fixtures.js'

const PATH = '/apis/format.example.com/v1/namespaces/default/budgets'

describe('format() in a CRD message expression', () => {
  let client: TestClient
  before(async () => {
    client = await startServer()
    const spec = {
      type: 'object',
      properties: {
        amount: { type: 'number' },
        owners: { type: 'array', maxItems: 4, items: { type: 'string', maxLength: 16 } },
        period: { type: 'string', maxLength: 16 },
      },
      'x-kubernetes-validations': [
        {
          rule: 'self.amount < 1000000.0',
          messageExpression: "'amount %s of %s over %s is too large'.format([self.amount, self.owners, duration(self.period)])",
        },
        // string() alone: its result has no size cel-go's estimator knows, so concatenating it would put the
        // rule over the cost budget, as upstream refuses it.
        { rule: 'self.amount < 2000000.0', messageExpression: 'string(self.amount)' },
      ],
    }
    const crd = specSchemaDefinition('format.example.com', 'budgets', 'Budget', spec)
    await createServedDefinition(client, crd, PATH)
  })

  it("refuses an object with the message cel-go writes, and stores nothing", async () => {
    const res = await client.post(PATH, { apiVersion: 'format.example.com/v1', kind: 'Budget', metadata: { name: 'big' }, spec: { amount: 2500000.5, owners: ['a"b', 'c'], period: '1h' } })
    assert.equal(res.status, 422, res.text.slice(-300))
    assert.deepEqual(causeLines(res), [
      'spec: Invalid value: "object": amount 2.5000005e+06 of ["a\\"b", "c"] over 3600s is too large',
      'spec: Invalid value: "object": 2.5000005e+06',
    ])
    assert.equal((await client.get(`${PATH}/big`)).status, 404)
  })
})
