/**
 * A CRD's CEL rules compiled ahead of its validation, a schema node at a
 * time (warmRules): the validation's compileRules then gives what it gives
 * without them, errors and all, and a malformed schema is left to it.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { type CelSchemaProps, compileRules, warmRules } from '../../../core/crd-schema/cel-rules.js'
import { errorText, fieldPath } from '../../../core/machinery/field.js'
import { runCounting } from '../../fixtures/checkpoints.js'

const schema = (): CelSchemaProps =>
  ({
    type: 'object',
    'x-kubernetes-validations': [{ rule: 'self.spec.replicas >= 0', message: 'no negative replicas' }],
    properties: {
      spec: {
        type: 'object',
        'x-kubernetes-validations': [
          { rule: 'self.replicas <= self.max', messageExpression: "'too many: ' + string(self.replicas)" },
          { rule: 'self.replicas == oldSelf.replicas', optionalOldSelf: false },
          { rule: 'self.nosuchfield == 1' },
          { rule: 'self.replicas' },
        ],
        properties: {
          replicas: { type: 'integer' },
          max: { type: 'integer' },
          items: { type: 'array', items: { type: 'string', maxLength: 10, 'x-kubernetes-validations': [{ rule: 'self.startsWith("a")' }] }, maxItems: 5 },
          labels: { type: 'object', additionalProperties: { type: 'string', 'x-kubernetes-validations': [{ rule: 'size(self) < 64' }] } },
          embedded: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true, 'x-kubernetes-validations': [{ rule: 'self.kind != ""' }] },
        },
      },
    },
  }) as unknown as CelSchemaProps

function compiledRuleCount(node: unknown): number {
  if (!node || typeof node !== 'object') return 0
  const n = node as { rules?: unknown[]; properties?: Map<string, unknown>; items?: unknown; additionalProperties?: unknown }
  return (n.rules?.length ?? 0) + [...(n.properties?.values() ?? [])].reduce<number>((sum, p) => sum + compiledRuleCount(p), 0) + compiledRuleCount(n.items) + compiledRuleCount(n.additionalProperties)
}

describe('CEL rules compiled ahead of a CRD validation', () => {
  it('leave compileRules with the same errors and the same rules, after a checkpoint per node with rules', () => {
    const path = fieldPath('spec').child('versions').index(0).child('schema').child('openAPIV3Schema')
    const cold = compileRules(schema(), path, { resourceRoot: true })
    const warmed = schema()
    const { checkpoints } = runCounting(warmRules(warmed))
    assert.equal(checkpoints, 5, 'the root, spec, the items, the map values and the embedded resource')
    const warm = compileRules(warmed, path, { resourceRoot: true })
    assert.deepEqual(warm.errors.map(errorText), cold.errors.map(errorText))
    const texts = cold.errors.map(errorText).join('\n')
    assert.match(texts, /undefined field 'nosuchfield'/)
    assert.match(texts, /cel expression must evaluate to a bool/)
    assert.match(texts, /estimated messageExpression cost exceeds budget/)
    assert.equal(compiledRuleCount(warm.compiled), compiledRuleCount(cold.compiled))
    assert.equal(compiledRuleCount(warm.compiled), 6, 'the eight rules but the two that do not compile')
  })

  it('warms what it can of a malformed schema and throws nothing: the validation reports it', () => {
    const malformed = [
      null,
      'text',
      { 'x-kubernetes-validations': [null, 'rule', { rule: 7 }, { rule: 'self.x == 1' }], properties: { a: 'not a schema', b: { items: [1] } } },
      { type: 'object', properties: { x: { type: 'array' } }, 'x-kubernetes-validations': [{ rule: 'self.x.all(i, i > 0)' }] },
    ]
    for (const node of malformed) {
      const work = warmRules(node)
      assert.doesNotThrow(() => {
        while (!work.next().done);
      })
    }
  })
})
