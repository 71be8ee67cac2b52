/**
 * The audit Policy of `--audit-policy-file` (audit.k8s.io/v1): rules in
 * order, each with the level it records at. The rules checked are
 * upstream's ValidatePolicy; a policy without rules is refused, as upstream
 * refuses it, since it would record nothing while looking like it does.
 */
import { z } from 'zod'
import { AUDIT_API_VERSION, AUDIT_LEVELS, AUDIT_STAGES, type AuditPolicy, type AuditPolicyRule } from '../audit/types.js'
import { type FieldError, FieldPath, invalid, notSupported, required } from '../machinery/field.js'
import { isDNS1123Subdomain } from '../machinery/names.js'
import { type ConfigKind, decodeConfig } from './decode.js'

const strings = z.lazy(() => z.array(z.string()).nullish())

const groupResourcesSchema = z.lazy(() => z.strictObject({
  group: z.string().nullish(),
  resources: strings,
  resourceNames: strings,
}))

const ruleSchema = z.lazy(() => z.strictObject({
  level: z.string().nullish(),
  users: strings,
  userGroups: strings,
  verbs: strings,
  resources: z.array(groupResourcesSchema).nullish(),
  namespaces: strings,
  nonResourceURLs: strings,
  omitStages: strings,
  omitManagedFields: z.boolean().nullish(),
}))

const policySchema = z.lazy(() => z.strictObject({
  metadata: z.record(z.string(), z.unknown()).nullish(),
  rules: z.array(ruleSchema).nullish(),
  omitStages: strings,
  omitManagedFields: z.boolean().nullish(),
}))

type PolicyDocument = z.infer<typeof policySchema>
type RuleDocument = z.infer<typeof ruleSchema>

function ruleErrors(rule: RuleDocument, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  const level = rule.level ?? ''
  if (level === '') errs.push(required(path.child('level')))
  else if (!(AUDIT_LEVELS as readonly string[]).includes(level)) errs.push(notSupported(path.child('level'), level, AUDIT_LEVELS))
  ;(rule.nonResourceURLs ?? []).forEach((url, i) => {
    if (url === '*') return
    const at = path.child('nonResourceURLs').index(i)
    if (!url.startsWith('/')) errs.push(invalid(at, url, "non-resource URL rules must begin with a '/' character"))
    if (url.slice(0, -1).includes('*')) errs.push(invalid(at, url, "non-resource URL wildcards '*' must be the final character of the rule"))
  })
  for (const gr of rule.resources ?? []) {
    const group = gr.group ?? ''
    const problems = group ? isDNS1123Subdomain(group) : []
    if (problems.length) errs.push(invalid(path.child('resources').child('group'), group, problems.join(',')))
    if (gr.resourceNames?.length && !gr.resources?.length) {
      errs.push(invalid(path.child('resources').child('resourceNames'), gr.resourceNames, 'using resourceNames requires at least one resource'))
    }
  }
  ;(rule.omitStages ?? []).forEach((stage, i) => {
    if (!(AUDIT_STAGES as readonly string[]).includes(stage)) {
      errs.push(invalid(path.child('omitStages').index(i), stage, `allowed stages are ${AUDIT_STAGES.join(',')}`))
    }
  })
  if (rule.nonResourceURLs?.length && (rule.resources?.length || rule.namespaces?.length)) {
    errs.push(invalid(path.child('nonResourceURLs'), rule.nonResourceURLs, 'rules cannot apply to both regular resources and non-resource URLs'))
  }
  return errs
}

function validatePolicy(policy: PolicyDocument): FieldError[] {
  const rules = policy.rules ?? []
  if (!rules.length) return [required(FieldPath.root('rules'), 'loaded illegal policy with 0 rules')]
  return rules.flatMap((rule, i) => ruleErrors(rule, FieldPath.root('rules').index(i)))
}

const PolicyKind: ConfigKind<PolicyDocument> = {
  kind: 'Policy',
  apiVersions: [AUDIT_API_VERSION],
  schema: policySchema,
  validate: validatePolicy,
}

const defined = <T>(value: T | null | undefined): T | undefined => value ?? undefined

function toRule(rule: RuleDocument): AuditPolicyRule {
  const out: AuditPolicyRule = { level: rule.level as AuditPolicyRule['level'] }
  for (const key of ['users', 'userGroups', 'verbs', 'namespaces', 'nonResourceURLs'] as const) {
    const value = defined(rule[key])
    if (value) out[key] = value
  }
  if (rule.resources) {
    out.resources = rule.resources.map((gr) => ({
      group: gr.group ?? '',
      ...(gr.resources ? { resources: gr.resources } : {}),
      ...(gr.resourceNames ? { resourceNames: gr.resourceNames } : {}),
    }))
  }
  if (rule.omitStages) out.omitStages = rule.omitStages as AuditPolicyRule['omitStages']
  if (rule.omitManagedFields != null) out.omitManagedFields = rule.omitManagedFields
  return out
}

/** Reads and validates the text of an audit policy file. Throws ConfigFileError listing every problem. */
export function loadAuditPolicy(text: string, source: string): AuditPolicy {
  const doc = decodeConfig(text, source, PolicyKind)
  return {
    rules: (doc.rules ?? []).map(toRule),
    ...(doc.omitStages ? { omitStages: doc.omitStages as AuditPolicy['omitStages'] } : {}),
    ...(doc.omitManagedFields != null ? { omitManagedFields: doc.omitManagedFields } : {}),
  }
}
