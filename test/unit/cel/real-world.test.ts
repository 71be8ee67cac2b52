/**
 * Every CEL expression of the published manifests kept beside the project
 * (the Gateway API's CRDs and its ValidatingAdmissionPolicy, cert-manager's
 * CRDs) compiles in the environment upstream compiles it in: CRD rules
 * against their schema node's type, and within upstream's estimated cost
 * limits, the policy's validations with `object`, `oldObject`, `request`
 * and `authorizer`.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { type CelSchemaProps, compileRules } from '../../../core/crd-schema/cel-rules.js'
import { applyPolicyDefaults, validateValidatingPolicy } from '../../../core/resources/admissionregistration/policies.js'
import { errorText, fieldPath } from '../../../core/machinery/field.js'
import { realWorldManifests, WITHOUT_REAL_WORLD } from '../../fixtures/real-world.js'

/** How many rules a schema holds, so the test knows it compiled something. */
function countRules(schema: CelSchemaProps | undefined): number {
  if (!schema) return 0
  const extra = typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined
  return (
    (schema['x-kubernetes-validations'] ?? []).length +
    Object.values(schema.properties ?? {}).reduce((n, p) => n + countRules(p), 0) +
    countRules(schema.items) +
    countRules(extra)
  )
}

interface CRDVersion {
  name: string
  schema?: { openAPIV3Schema?: CelSchemaProps }
}

describe('CEL of real-world manifests', { skip: WITHOUT_REAL_WORLD }, () => {
  const all = realWorldManifests()

  it('compiles every x-kubernetes-validations rule of the published CRDs, each within the cost limits', () => {
    let rules = 0
    const failures: string[] = []
    for (const { file, object } of all.filter((m) => m.object.kind === 'CustomResourceDefinition')) {
      for (const version of (object['spec'] as { versions: CRDVersion[] }).versions) {
        const schema = version.schema?.openAPIV3Schema
        rules += countRules(schema)
        const path = fieldPath('spec').child('versions').child(version.name).child('schema').child('openAPIV3Schema')
        const { errors } = compileRules(schema ?? {}, path, { resourceRoot: true })
        failures.push(...errors.map((e) => `${file}: ${errorText(e)}`))
      }
    }
    assert.deepEqual(failures, [])
    assert.ok(rules > 500, `compiled ${rules} rules`)
  })

  it("accepts the Gateway API's ValidatingAdmissionPolicy, whose rule calls the global matches()", () => {
    const policies = all.filter((m) => m.object.kind === 'ValidatingAdmissionPolicy')
    assert.ok(policies.length > 0)
    for (const { file, object } of policies) {
      const expressions = (object['spec'] as { validations: { expression: string }[] }).validations.map((v) => v.expression)
      assert.ok(expressions.some((e) => e.includes('!matches(')), file)
      applyPolicyDefaults(object)
      assert.deepEqual(validateValidatingPolicy(object).map(errorText), [], file)
    }
  })
})
