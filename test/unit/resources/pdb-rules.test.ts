/** PodDisruptionBudgets: one budget, counts or percentages, a valid selector, a known eviction policy. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../../core/machinery/object.js'
import { validatePodDisruptionBudget, validatePodDisruptionBudgetUpdate } from '../../../core/resources/policy/pdb-rules.js'
import { errorText } from '../../../core/machinery/field.js'

const pdb = (spec: Record<string, unknown>): KubeObject => ({ metadata: { name: 'b', namespace: 'ns' }, spec })
const problems = (spec: Record<string, unknown>) => validatePodDisruptionBudget(pdb(spec)).map(errorText)
const PERCENT = "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"

describe('pod disruption budget rules', () => {
  it('accepts a count, a percentage, or no budget at all', () => {
    assert.deepEqual(problems({ minAvailable: 2, selector: { matchLabels: { app: 'web' } } }), [])
    assert.deepEqual(problems({ maxUnavailable: '25%', unhealthyPodEvictionPolicy: 'AlwaysAllow' }), [])
    assert.deepEqual(problems({}), [])
  })

  it('refuses both budgets at once', () => {
    assert.deepEqual(problems({ minAvailable: 1, maxUnavailable: 1 }), [
      'spec: Invalid value: {"minAvailable":1,"maxUnavailable":1}: minAvailable and maxUnavailable cannot be both set',
    ])
  })

  it('refuses negative counts, malformed percentages and more than 100%', () => {
    assert.deepEqual(problems({ minAvailable: -1 }), ['spec.minAvailable: Invalid value: -1: must be greater than or equal to 0'])
    assert.deepEqual(problems({ maxUnavailable: 'half' }), [
      `spec.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"half"}: ${PERCENT}`,
    ])
    assert.deepEqual(problems({ minAvailable: '150%' }), [
      'spec.minAvailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"150%"}: must not be greater than 100%',
    ])
  })

  it('checks the selector and the unhealthy pod eviction policy', () => {
    assert.deepEqual(
      problems({ selector: { matchLabels: { 'bad key!': 'v' }, matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] }, unhealthyPodEvictionPolicy: 'Never' }).map(
        (t) => t.split(': ').slice(0, 2).join(': '),
      ),
      [
        'spec.selector.matchLabels: Invalid value',
        'spec.selector.matchExpressions[0].values: Forbidden',
        'spec.unhealthyPodEvictionPolicy: Unsupported value',
      ],
    )
    assert.deepEqual(problems({ unhealthyPodEvictionPolicy: 'Never' }), [
      'spec.unhealthyPodEvictionPolicy: Unsupported value: "Never": supported values: "AlwaysAllow", "IfHealthyBudget"',
    ])
  })

  it('lets an update keep a selector value stored before values were checked, as upstream does', () => {
    const oddSelector = { matchExpressions: [{ key: 'app', operator: 'In', values: ['not a label value!'] }] }
    const badValue = 'spec.selector.matchExpressions[0].values[0]: Invalid value: "not a label value!"'
    assert.ok(problems({ selector: oddSelector }).some((e) => e.startsWith(badValue)))
    assert.deepEqual(validatePodDisruptionBudgetUpdate(pdb({ minAvailable: 1, selector: oddSelector }), pdb({ selector: oddSelector })).map(errorText), [])
    // A well-formed stored selector keeps the strict rule.
    const strict = validatePodDisruptionBudgetUpdate(pdb({ selector: oddSelector }), pdb({ selector: { matchLabels: { app: 'web' } } })).map(errorText)
    assert.equal(strict.length, 1)
    assert.ok(strict[0]?.startsWith(badValue), strict[0])
  })
})
