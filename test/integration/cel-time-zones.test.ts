/**
 * A timestamp's fields in CRD rules read as cel-go reads them: UTC without
 * a zone whatever the server process's time zone, and a fixed offset
 * (`'+05:30'`, `'-08:00'`) as well as a zone's name. A zone that is neither
 * fails the rule with Go's error, and nothing is stored.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { causeLines, startServer, type TestClient } from './harness.js'
import { createServedDefinition, specSchemaDefinition } from './crd-fixtures.js'

const PATH = '/apis/zones.example.com/v1/namespaces/default/shifts'

describe('timestamp fields in CRD rules', () => {
  let client: TestClient
  before(async () => {
    client = await startServer()
    const spec = {
      type: 'object',
      properties: {
        at: { type: 'string', maxLength: 32 },
        zone: { type: 'string', maxLength: 32 },
      },
      'x-kubernetes-validations': [
        { rule: "timestamp(self.at).getHours('+05:30') == 7 && timestamp(self.at).getMinutes('+05:30') == 30", message: 'must start at 07:30 in India' },
        { rule: "timestamp(self.at).getHours('-08:00') == 18 && timestamp(self.at).getDayOfYear() == 181", message: 'must start the evening before in California' },
        { rule: "!has(self.zone) || timestamp(self.at).getHours(self.zone) >= 0", message: 'zone' },
      ],
    }
    const crd = specSchemaDefinition('zones.example.com', 'shifts', 'Shift', spec)
    await createServedDefinition(client, crd, PATH)
  })

  const shift = (name: string, spec: Record<string, string>) => ({ apiVersion: 'zones.example.com/v1', kind: 'Shift', metadata: { name }, spec })

  it('admits an object whose times match in fixed offsets', async () => {
    const res = await client.post(PATH, shift('morning', { at: '2024-06-30T02:00:00Z', zone: 'Asia/Kolkata' }))
    assert.equal(res.status, 201, res.text.slice(-300))
  })

  it('refuses one whose times do not, with the rules messages, and stores nothing', async () => {
    const res = await client.post(PATH, shift('late', { at: '2024-06-30T03:00:00Z' }))
    assert.equal(res.status, 422, res.text.slice(-300))
    assert.deepEqual(causeLines(res), ['spec: Invalid value: "object": must start at 07:30 in India', 'spec: Invalid value: "object": must start the evening before in California'])
    assert.equal((await client.get(`${PATH}/late`)).status, 404)
  })

  it("refuses a zone Go does not know with Go's error, and stores nothing", async () => {
    for (const [name, zone, error] of [
      ['bogus', 'Bogus/Zone', 'unknown time zone Bogus/Zone'],
      ['dots', '../etc/passwd', 'time: invalid location name'],
      ['offset', '+05:x', 'strconv.Atoi: parsing "x": invalid syntax'],
    ] as const) {
      const res = await client.post(PATH, shift(name, { at: '2024-06-30T02:00:00Z', zone }))
      assert.equal(res.status, 422, res.text.slice(-300))
      assert.deepEqual(causeLines(res), [`spec: Invalid value: "object": ${error} evaluating rule: zone`])
      assert.equal((await client.get(`${PATH}/${name}`)).status, 404)
    }
  })
})
