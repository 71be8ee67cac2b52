/**
 * The type check of ValidatingAdmissionPolicies (upstream's
 * validatingadmissionpolicy-status controller, run in-process): each
 * validation, message expression and audit annotation is checked again with
 * `object` and `oldObject` typed as every kind the policy's resource rules
 * name explicitly, so that a misspelt field is reported before a request
 * trips on it. What it finds goes to `status.typeChecking.expressionWarnings`
 * (cel-go's wording, prefixed with the kind), with `status.observedGeneration`.
 * Rules with wildcards, and parameters, are not typed, as upstream.
 */
import type { Environment } from '@marcbachmann/cel-js'
import { parseAndCheck, issueText } from '../../cel/checked.js'
import { kubernetesEnvironment } from '../../cel/library/index.js'
import type { CelSchemaProps } from '../../crd-schema/cel-schema.js'
import { declareShape } from '../../crd-schema/cel-schema.js'
import type { StoredObjects } from '../../client/stored-objects.js'
import type { Catalogue } from '../../resources/catalogue.js'
import type { Logger } from '../../logging/logger.js'
import { LOOPBACK_IDENTITY } from '../../machinery/identities.js'
import { ADMISSION_REQUEST_FIELDS } from '../../resources/admissionregistration/cel.js'
import { validatingAdmissionPolicies } from '../../resources/groups/admissionregistration.js'
import type { KubeObject } from '../../machinery/object.js'
import { type TypeRef, typeTable } from '../../resources/schema/index.js'
import { messagesAsMaps } from './object-literals.js'

const MANAGER = 'validatingadmissionpolicy-status-controller'
/** Deeper than any field a policy reads; recursive types (JSONSchemaProps) end there as dyn. */
const MAX_SCHEMA_DEPTH = 12
const MAX_KINDS = 10

function schemaOf(ref: TypeRef, depth: number): CelSchemaProps {
  if (depth > MAX_SCHEMA_DEPTH) return { 'x-kubernetes-preserve-unknown-fields': true }
  if ('scalar' in ref) {
    switch (ref.scalar) {
      case 'boolean':
        return { type: 'boolean' }
      case 'int32':
      case 'int64':
        return { type: 'integer' }
      case 'double':
        return { type: 'number' }
      case 'int-or-string':
        return { 'x-kubernetes-int-or-string': true }
      case 'raw':
        return { 'x-kubernetes-preserve-unknown-fields': true }
      default:
        return { type: 'string' }
    }
  }
  if ('array' in ref) return { type: 'array', items: schemaOf(ref.array, depth + 1) }
  if ('map' in ref) return { type: 'object', additionalProperties: schemaOf(ref.map, depth + 1) }
  const type = typeTable[ref.ref]
  if (!type || type.jsonForms) return { 'x-kubernetes-preserve-unknown-fields': true }
  const properties: Record<string, CelSchemaProps> = {}
  for (const field of type.fields) properties[field.name] = schemaOf(field.type, depth + 1)
  return { type: 'object', properties }
}

interface TypedKind {
  label: string
  env: Environment
}

const environments = new Map<string, TypedKind | null>()

/** The environment with `object` and `oldObject` typed as the kind served at group/version/resource. */
function typedEnvironment(catalogue: Catalogue, group: string, version: string, resource: string): TypedKind | undefined {
  const key = `${group}/${version}/${resource}`
  const known = environments.get(key)
  if (known !== undefined) return known ?? undefined
  const entry = catalogue.lookup(group, version, resource)
  const schema: CelSchemaProps | undefined = entry?.schema
    ? (entry.schema as CelSchemaProps)
    : entry && typeTable[entry.typeName]
      ? schemaOf({ ref: entry.typeName }, 0)
      : undefined
  if (!entry || !schema) {
    environments.set(key, null)
    return undefined
  }
  const env = kubernetesEnvironment()
  const shape = declareShape(env, schema, 'Object', true)
  env
    .registerVariable('object', shape.type)
    .registerVariable('oldObject', shape.type)
    .registerVariable('namespaceObject', 'dyn')
    .registerVariable('params', 'dyn')
    .registerVariable('variables', 'map<string, dyn>')
    .registerVariable('authorizer', 'dyn')
    .registerVariable('request', { schema: ADMISSION_REQUEST_FIELDS })
  const typed = { label: `${group}/${version}, Kind=${entry.kind}`, env }
  environments.set(key, typed)
  return typed
}

/** The kinds a policy's rules name without wildcards. */
function kindsOf(catalogue: Catalogue, policy: KubeObject): TypedKind[] {
  const rules = ((policy['spec'] as { matchConstraints?: { resourceRules?: Record<string, string[] | undefined>[] } })?.matchConstraints?.resourceRules ?? [])
  const kinds: TypedKind[] = []
  for (const rule of rules) {
    for (const group of rule['apiGroups'] ?? [])
      for (const version of rule['apiVersions'] ?? [])
        for (const resource of rule['resources'] ?? []) {
          if ([group, version, resource].some((x) => x.includes('*')) || resource.includes('/')) continue
          const typed = typedEnvironment(catalogue, group, version, resource)
          if (typed && !kinds.includes(typed) && kinds.length < MAX_KINDS) kinds.push(typed)
        }
  }
  return kinds
}

export interface ExpressionWarning {
  fieldRef: string
  warning: string
}

/** The warnings of one policy's expressions, checked against the kinds it names. */
export function typeCheckPolicy(catalogue: Catalogue, policy: KubeObject): ExpressionWarning[] {
  const kinds = kindsOf(catalogue, policy)
  if (kinds.length === 0) return []
  const spec = (policy['spec'] ?? {}) as {
    validations?: { expression?: string; messageExpression?: string }[]
    auditAnnotations?: { valueExpression?: string }[]
  }
  const expressions: [string, string][] = []
  ;(spec.validations ?? []).forEach((v, i) => {
    if (v.expression) expressions.push([`spec.validations[${i}].expression`, v.expression])
    if (v.messageExpression) expressions.push([`spec.validations[${i}].messageExpression`, v.messageExpression])
  })
  ;(spec.auditAnnotations ?? []).forEach((a, i) => {
    if (a.valueExpression) expressions.push([`spec.auditAnnotations[${i}].valueExpression`, a.valueExpression])
  })
  const warnings: ExpressionWarning[] = []
  for (const [fieldRef, expression] of expressions) {
    const found: string[] = []
    for (const kind of kinds) {
      let outcome
      try {
        outcome = parseAndCheck(kind.env, messagesAsMaps(expression))
      } catch (err) {
        outcome = { issue: issueText(expression, err as Error) }
      }
      if ('issue' in outcome) found.push(`${kind.label}: ${outcome.issue}`)
    }
    if (found.length) warnings.push({ fieldRef, warning: found.join('\n') })
  }
  return warnings
}

/** The controller: policies whose generation it has not seen yet get their status written. */
export function startTypeChecking(catalogue: Catalogue, stored: StoredObjects, logger: Logger, now: () => Date): { policiesChanged: (policies: readonly KubeObject[]) => void; stop(): void } {
  let stopped = false
  let running: Promise<void> = Promise.resolve()
  const check = async (policy: KubeObject): Promise<void> => {
    const generation = policy.metadata.generation
    const status = policy['status'] as { observedGeneration?: number } | undefined
    if (stopped || generation === undefined || status?.observedGeneration === generation) return
    const expressionWarnings = typeCheckPolicy(catalogue, policy)
    await stored.update(
      validatingAdmissionPolicies,
      '',
      policy.metadata.name ?? '',
      (current) => {
        // A newer generation is checked when its own event comes.
        if (current.metadata.generation !== generation) return current
        return { ...current, status: { observedGeneration: generation, typeChecking: expressionWarnings.length ? { expressionWarnings } : {} } }
      },
      { user: LOOPBACK_IDENTITY, now: now(), fieldManager: MANAGER },
      'status',
    )
  }
  return {
    policiesChanged(policies) {
      const pending = policies.filter((p) => (p['status'] as { observedGeneration?: number } | undefined)?.observedGeneration !== p.metadata.generation)
      if (pending.length === 0) return
      running = running.then(async () => {
        for (const policy of pending) {
          await check(policy).catch((err: unknown) => {
            if (!stopped) logger.warn({ policy: policy.metadata.name, err: String(err) }, 'cannot write the type check of a ValidatingAdmissionPolicy')
          })
        }
      })
    },
    stop() {
      stopped = true
    },
  }
}
