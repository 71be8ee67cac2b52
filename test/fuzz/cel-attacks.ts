/**
 * CEL expressions whose work grows while they run, and the configuration
 * that puts them in the fuzz suite's server: a CRD whose rules run them, a
 * ValidatingAdmissionPolicy whose variables and validations run them, and a
 * webhook whose match conditions run them. Each is chosen by the object's
 * `attack` field (a ConfigMap's `data.attack`), so one request runs one
 * attack. The server must cancel each while it runs and stay ready.
 */
import { CONFIGMAPS, type FuzzRequest } from './worst-inputs.js'

export const CEL_ATTACKS = '/apis/fuzz.example.com/v1/namespaces/default/celattacks'

/** `a1 = list + list`, `aN = aN-1 + aN-1`, ..., then `size(a<levels>) > 0`: the list doubles `levels` times. */
export function bindDoubling(levels: number, list: string): string {
  let body = `size(a${levels}) > 0`
  for (let i = levels; i >= 2; i--) body = `cel.bind(a${i}, a${i - 1} + a${i - 1}, ${body})`
  return `cel.bind(a1, ${list} + ${list}, ${body})`
}

export interface CelAttack {
  /** The value of the `attack` field that runs it. */
  key: string
  name: string
  expression: string
}

/**
 * The attacks over a list of eight short strings (`list`), a string of a
 * thousand characters (`text`) and a list of a thousand (`long`).
 */
export function celAttacks(list: string, text: string, long: string): CelAttack[] {
  return [
    { key: 'bind23', name: 'cel.bind doubling a list 23 times', expression: bindDoubling(23, list) },
    { key: 'bind26', name: 'cel.bind doubling a list 26 times', expression: bindDoubling(26, list) },
    { key: 'loops', name: 'three loops nested over a thousand items', expression: `${long}.all(x, ${long}.all(y, ${long}.all(z, x + y + z != '')))` },
    { key: 'replace', name: 'a string repeated by a chain of replace', expression: `${text}.replace('a', ${text}).replace('a', ${text}).size() > 0` },
    {
      key: 'join',
      name: 'a long string joined with itself',
      expression: `cel.bind(big, ${text}.replace('a', ${text}), [big, big, big, big, big, big, big, big, big, big, big, big].join(big).size() > 0)`,
    },
  ]
}

export const TEXT = 'a'.repeat(1000)
export const EIGHT = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']
export const THOUSAND = Array.from({ length: 1000 }, (_, i) => String(i % 10))

/** ConfigMap data the admission attacks read: `l` splits into eight strings, `s` is a thousand characters. */
export const ATTACK_DATA = { l: EIGHT.join(','), s: TEXT }
export const ADMISSION_ATTACKS = celAttacks("object.data.l.split(',')", 'object.data.s', "object.data.s.split('')")

const VARIABLE_STEPS = 26

/** v1 = [name], v2 = v1 + v1, ...: the list doubles with every variable. */
export function doublingVariables(steps: number): { name: string; expression: string }[] {
  const variables = [{ name: 'v1', expression: '[object.metadata.name]' }]
  for (let i = 2; i <= steps; i++) variables.push({ name: `v${i}`, expression: `variables.v${i - 1} + variables.v${i - 1}` })
  return variables
}

/**
 * The attacks a CRD may carry: the nested loops and the join are refused
 * when the CRD is written (their estimated cost is past the limit, as
 * upstream estimates it), so they never run as rules.
 */
const CRD_ATTACKS = celAttacks('self.l', 'self.s', 'self.n').filter(({ key }) => key !== 'loops' && key !== 'join')

/** The CRD (group fuzz.example.com) whose rules run the attacks on `spec`. */
export function celAttackDefinition(): Record<string, unknown> {
  const rules = CRD_ATTACKS.map(({ key, expression }) => ({ rule: `self.attack != '${key}' || (${expression})`, message: key }))
  const spec = {
    type: 'object',
    properties: {
      attack: { type: 'string', maxLength: 16 },
      l: { type: 'array', maxItems: 8, items: { type: 'string', maxLength: 8 } },
      s: { type: 'string', maxLength: 1000 },
      n: { type: 'array', maxItems: 1000, items: { type: 'string', maxLength: 1 } },
    },
    'x-kubernetes-validations': rules,
  }
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'celattacks.fuzz.example.com' },
    spec: {
      group: 'fuzz.example.com',
      scope: 'Namespaced',
      names: { plural: 'celattacks', singular: 'celattack', kind: 'CelAttack' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec } } } }],
    },
  }
}

const ADM = '/apis/admissionregistration.k8s.io/v1'
const POLICY_PREFIX = 'cel-attack-policy'
const HOOK_PREFIX = 'cel-attack-hook'

/** A policy (and its binding) on ConfigMaps named `cel-attack-policy*`, and a webhook whose conditions select `cel-attack-hook*`. */
export function celAttackConfigurations(): Array<{ collection: string; body: object }> {
  const chosen = (key: string, expression: string) => `object.data.attack != '${key}' || (${expression})`
  const policy = {
    metadata: { name: 'cel-attacks' },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['configmaps'] }] },
      matchConditions: [{ name: 'attacks-only', expression: `object.metadata.name.startsWith('${POLICY_PREFIX}') && has(object.data) && has(object.data.attack)` }],
      variables: doublingVariables(VARIABLE_STEPS),
      validations: [
        { expression: chosen('variables', `size(variables.v${VARIABLE_STEPS}) > 0`) },
        ...ADMISSION_ATTACKS.map(({ key, expression }) => ({ expression: chosen(key, expression) })),
      ],
    },
  }
  const binding = { metadata: { name: 'cel-attacks' }, spec: { policyName: 'cel-attacks', validationActions: ['Deny'] } }
  // One webhook per attack: a false condition skips its webhook even when another condition fails, as upstream decides.
  const webhooks = {
    metadata: { name: 'cel-attacks' },
    webhooks: ADMISSION_ATTACKS.map(({ key, expression }) => ({
      name: `${key}.cel-attacks.fuzz.example.com`,
      // Never called: its condition is false or cancelled for every object it could select.
      clientConfig: { url: 'https://127.0.0.1:9/never-called' },
      rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
      failurePolicy: 'Fail',
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      matchConditions: [
        {
          name: key,
          expression: `object.metadata.name.startsWith('${HOOK_PREFIX}') && has(object.data) && has(object.data.attack) && object.data.attack == '${key}' && (${expression})`,
        },
      ],
    })),
  }
  return [
    { collection: `${ADM}/validatingadmissionpolicies`, body: policy },
    { collection: `${ADM}/validatingadmissionpolicybindings`, body: binding },
    { collection: `${ADM}/validatingwebhookconfigurations`, body: webhooks },
  ]
}

const json = { 'content-type': 'application/json' }

/** One request per attack and per place it runs: each must be refused (422 or 403) and leave the server ready. */
export function celAttackRequests(): Array<{ name: string; request: FuzzRequest }> {
  const requests: Array<{ name: string; request: FuzzRequest }> = []
  for (const { key, name } of CRD_ATTACKS) {
    const object = { apiVersion: 'fuzz.example.com/v1', kind: 'CelAttack', metadata: { name: `attack-${key}` }, spec: { attack: key, l: EIGHT, s: TEXT, n: THOUSAND } }
    requests.push({ name: `CEL rule: ${name}`, request: { method: 'POST', path: CEL_ATTACKS, headers: json, body: JSON.stringify(object) } })
  }
  for (const { key, name } of [{ key: 'variables', name: `policy variables doubling a list ${VARIABLE_STEPS} times` }, ...ADMISSION_ATTACKS]) {
    const object = { metadata: { name: `${POLICY_PREFIX}-${key}` }, data: { attack: key, ...ATTACK_DATA } }
    requests.push({ name: `CEL policy: ${name}`, request: { method: 'POST', path: CONFIGMAPS, headers: json, body: JSON.stringify(object) } })
  }
  for (const { key, name } of ADMISSION_ATTACKS) {
    const object = { metadata: { name: `${HOOK_PREFIX}-${key}` }, data: { attack: key, ...ATTACK_DATA } }
    requests.push({ name: `CEL webhook match condition: ${name}`, request: { method: 'POST', path: CONFIGMAPS, headers: json, body: JSON.stringify(object) } })
  }
  return requests
}
