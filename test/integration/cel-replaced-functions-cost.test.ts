/**
 * The functions this server runs in place of the CEL library's own
 * (`s.matches(re)` on RE2; `indexOf`, `lastIndexOf`, `substring`,
 * `lowerAscii`, `upperAscii` and `trim` counting code points as cel-go
 * does) charge the evaluation's meter what upstream charges, in every
 * program: a policy that loops over a few hundred items calling one of
 * them on a megabyte value is cancelled at the per-call limit, as upstream
 * cancels it, with 403 and nothing stored. Uncharged, such a policy held
 * the thread 4.5 s and admitted the object.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { eventually, startServer, type TestClient } from './harness.js'

const ADM = '/apis/admissionregistration.k8s.io/v1'
const CANCELLED = 'operation cancelled: actual cost limit exceeded'
const WAIT_MS = 30_000
/** A value of a megabyte, and a list of 300 items to loop over. */
const DATA = { s: 'a'.repeat(1_000_000), l: Array(300).fill('a').join(',') }

const CALLS = [
  "object.data.s.indexOf('z') < 0",
  "object.data.s.lastIndexOf('z') < 0",
  "object.data.s.substring(1) != ''",
  "object.data.s.lowerAscii() != ''",
  "object.data.s.upperAscii() != ''",
  "object.data.s.trim() != ''",
  "!object.data.s.matches('z')",
]

describe('functions replaced in the CEL library charge what upstream charges', () => {
  let client: TestClient
  before(async () => {
    client = await startServer({ admission: { plugins: ['ValidatingAdmissionPolicy'] } })
  })

  CALLS.forEach((call, i) => {
    it(`cancels a policy calling ${call} for each of 300 items with 403, and stores nothing`, async () => {
      const ns = `replaced-${i}`
      assert.equal((await client.post('/api/v1/namespaces', { metadata: { name: ns, labels: { replaced: ns } } })).status, 201)
      const expression = `object.data.l.split(',').all(x, ${call})`
      const policy = {
        metadata: { name: ns },
        spec: {
          failurePolicy: 'Fail',
          matchConstraints: {
            resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }],
            namespaceSelector: { matchLabels: { replaced: ns } },
          },
          matchConditions: [{ name: 'victims', expression: "object.metadata.name.startsWith('victim')" }],
          validations: [{ expression }, { expression: "object.data.s != 'stop'" }],
        },
      }
      assert.equal((await client.post(`${ADM}/validatingadmissionpolicies`, policy)).status, 201)
      const binding = { metadata: { name: ns }, spec: { policyName: ns, validationActions: ['Deny'] } }
      assert.equal((await client.post(`${ADM}/validatingadmissionpolicybindings`, binding)).status, 201)
      const configMaps = `/api/v1/namespaces/${ns}/configmaps`
      const stop = { metadata: { name: 'victim-probe' }, data: { s: 'stop', l: 'a' } }
      await eventually(`the policy ${ns} acts`, async () => (await client.post(`${configMaps}?dryRun=All`, stop)).status === 422, WAIT_MS)

      const res = await client.post(configMaps, { metadata: { name: 'victim' }, data: DATA })
      assert.equal(res.status, 403, res.text.slice(-400))
      assert.equal(res.body.reason, 'Forbidden')
      assert.equal(
        res.body.message,
        `configmaps "victim" is forbidden: ValidatingAdmissionPolicy '${ns}' with binding '${ns}' denied request: expression '${expression}' resulted in error: ${CANCELLED}`,
      )
      assert.equal((await client.get(`${configMaps}/victim`)).status, 404)
      assert.equal((await client.post(configMaps, { metadata: { name: 'victim-small' }, data: { s: 'abc', l: 'a,b' } })).status, 201)
    })
  })
})
