/**
 * A CRD whose rule names what its environment does not declare is refused
 * with 422 and cel-go's checker issue: an unknown variable or function is
 * an undeclared reference (the library said `Unknown variable: x`, or no
 * matching overload for a function no signature declares), an unknown
 * field is undefined and pointed at its selecting dot; the issue shows the
 * rule and a marker under the column, as cel-go displays an issue. Nothing
 * is stored.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { type Reply, startServer, type TestClient } from './harness.js'
import { CRDS, specSchemaDefinition } from './crd-fixtures.js'

const FIELD = 'spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule'

const causes = (res: Reply): { field?: string; message: string }[] => res.body?.details?.causes ?? []

function definition(plural: string, rule: string) {
  const spec = { type: 'object', properties: { name: { type: 'string', maxLength: 10 } }, 'x-kubernetes-validations': [{ rule }] }
  return specSchemaDefinition('rules.example.com', plural, plural[0]!.toUpperCase() + plural.slice(1, -1), spec)
}

describe('CRD rules that do not compile', () => {
  let client: TestClient
  before(async () => {
    client = await startServer()
  })

  const cases: [string, string, string][] = [
    ['unknowns', 'x == 1', "ERROR: <input>:1:1: undeclared reference to 'x' (in container '')"],
    ['olds', 'old.name == self.name', "ERROR: <input>:1:1: undeclared reference to 'old' (in container '')"],
    ['functions', 'frobnicate(self.name)', "ERROR: <input>:1:11: undeclared reference to 'frobnicate' (in container '')"],
    ['methods', 'self.name.reverse() == self.name', "ERROR: <input>:1:18: undeclared reference to 'reverse' (in container '')"],
    ['versions', "semver(self.name).major() == 1", "ERROR: <input>:1:7: undeclared reference to 'semver' (in container '')"],
    ['fields', "self.nme == 'a'", "ERROR: <input>:1:5: undefined field 'nme'"],
    ['overloads', 'size(self.name) == self.name', "ERROR: <input>:1:17: found no matching overload for '_==_' applied to '(int, string)'"],
  ]
  for (const [plural, rule, issue] of cases) {
    it(`refuses \`${rule}\` with 422 and cel-go's issue, storing nothing`, async () => {
      const res = await client.post(CRDS, definition(plural, rule))
      assert.equal(res.status, 422, res.text.slice(-300))
      const [cause, ...others] = causes(res)
      assert.deepEqual(others, [])
      assert.equal(cause?.field, FIELD)
      // Upstream quotes the whole rule as Go prints it.
      const quoted = `apiextensions.ValidationRule{Rule:${JSON.stringify(rule)}, Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}`
      const column = Number(/^ERROR: <input>:1:(\d+):/.exec(issue)?.[1])
      assert.equal(cause?.message, `Invalid value: ${quoted}: compilation failed: ${issue}\n | ${rule}\n | ${'.'.repeat(column - 1)}^`)
      assert.equal((await client.get(`${CRDS}/${plural}.rules.example.com`)).status, 404)
    })
  }
})
