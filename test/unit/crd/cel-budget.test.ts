import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { CEL_RULE_LIMITS, newCostBudget } from '../../../core/crd-schema/cel-cost.js'
import { type CelSchemaProps, compileRules, validateRules } from '../../../core/crd-schema/cel-rules.js'
import { errorText, fieldPath } from '../../../core/machinery/field.js'

const OUT_OF_BUDGET = 'validation failed due to running out of cost budget, no further validation rules will be run'

function compiled(schema: CelSchemaProps) {
  const result = compileRules(schema, fieldPath('schema'), { resourceRoot: false })
  assert.deepEqual(result.errors, [])
  return result.compiled
}

describe('x-kubernetes-validations: the cost limits', () => {
  it('refuses to run a rule whose cost for this input passes the per-call limit, and stops there', () => {
    // Within the static limit for a CRD (1000 items), past the per-call limit when the list is full.
    const schema: CelSchemaProps = {
      type: 'object',
      properties: {
        items: {
          type: 'array',
          maxItems: 1000,
          items: { type: 'integer' },
          'x-kubernetes-validations': [
            { rule: 'self.all(a, self.all(b, a == b || a != b))', message: 'quadratic' },
            { rule: 'false', message: 'never reached' },
          ],
        },
      },
    }
    const rules = compiled(schema)
    // On a small list both rules run.
    assert.deepEqual(validateRules(rules, { items: [1, 2, 3] }, undefined, fieldPath('spec')).map(errorText), [
      'spec.items: Invalid value: "array": never reached',
    ])
    const big = Array.from({ length: 1000 }, (_, i) => i)
    const started = Date.now()
    const errors = validateRules(rules, { items: big }, undefined, fieldPath('spec')).map(errorText)
    assert.deepEqual(errors, [
      "spec.items: Invalid value: \"array\": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run " +
        'due to call cost exceeds limit for rule: quadratic',
    ])
    assert.ok(Date.now() - started < 1000, 'the quadratic rule was not run')
  })

  it('stops every further rule once the request budget is spent, with one error', () => {
    const schema: CelSchemaProps = {
      type: 'array',
      items: { type: 'string', 'x-kubernetes-validations': [{ rule: "self != 'x'" }] },
    }
    const rules = compiled(schema)
    const values = Array.from({ length: 50 }, () => 'x')
    const errors = validateRules(rules, values, undefined, fieldPath('spec'), newCostBudget(30)).map(errorText)
    // Each evaluation costs 3 here: ten items fail, then the budget is gone.
    assert.equal(errors.length, 11)
    assert.equal(errors[9], 'spec[9]: Invalid value: "string": failed rule: self != \'x\'')
    assert.equal(errors[10], `spec[10]: Invalid value: "string": ${OUT_OF_BUDGET}`)
  })

  it('shares the budget across calls that pass the same budget', () => {
    const rules = compiled({ type: 'string', 'x-kubernetes-validations': [{ rule: "self != 'x'" }] })
    const budget = newCostBudget(5)
    assert.equal(validateRules(rules, 'x', undefined, fieldPath('a'), budget).length, 1)
    assert.deepEqual(validateRules(rules, 'x', undefined, fieldPath('b'), budget).map(errorText), [
      `b: Invalid value: "string": ${OUT_OF_BUDGET}`,
    ])
  })

  it('refuses an input past the value limit instead of converting it', () => {
    const rules = compiled({ type: 'array', items: { type: 'integer' }, 'x-kubernetes-validations': [{ rule: 'size(self) >= 0' }] })
    const huge = Array.from({ length: CEL_RULE_LIMITS.maxInputValues + 1 }, () => 1)
    assert.deepEqual(validateRules(rules, huge, undefined, fieldPath('spec')).map(errorText), [
      `spec: Invalid value: "array": ${OUT_OF_BUDGET}`,
    ])
  })

  it('reads a map of 20,000 keys as upstream does', () => {
    const rules = compiled({ type: 'object', additionalProperties: { type: 'string' }, 'x-kubernetes-validations': [{ rule: 'size(self) == 20000' }] })
    const map = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, 'v']))
    assert.deepEqual(validateRules(rules, map, undefined, fieldPath('spec')), [])
  })

  it('counts the values converted for every node with rules against one limit of the request', () => {
    // A rule on each of 30 levels, on each of 400 items: each conversion is in bounds (a chain and its 300
    // numbers), but each level converts its subtree again: 3.6 million values where the object has 130,000.
    let schema: CelSchemaProps = { type: 'array', items: { type: 'integer' } }
    for (let level = 0; level < 30; level++) schema = { type: 'object', properties: { a: schema }, 'x-kubernetes-validations': [{ rule: 'true' }] }
    const rules = compiled({ type: 'array', items: schema })
    const chain = () => {
      let value: unknown = Array.from({ length: 300 }, () => 0)
      for (let level = 0; level < 30; level++) value = { a: value }
      return value
    }
    const errors = validateRules(rules, Array.from({ length: 400 }, chain), undefined, fieldPath('spec')).map(errorText)
    assert.equal(errors.length, 1)
    assert.match(errors[0] as string, new RegExp(`^spec\\[\\d+\\](\\.a)*: Invalid value: "object": ${OUT_OF_BUDGET}$`))
    // Fewer items, within the limit: every rule runs and passes.
    assert.deepEqual(validateRules(rules, Array.from({ length: 20 }, chain), undefined, fieldPath('spec')), [])
  })
})
