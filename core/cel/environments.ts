/**
 * One CEL environment per use site, each declaring exactly the variable
 * upstream declares there (staging/src/k8s.io/apiserver/pkg/authentication/cel
 * and pkg/authorization/cel), so a misspelt variable or field is a type error
 * at load time:
 *
 * - `claims`: the JWT claims, `map<string, dyn>`;
 * - `user`: the user after claim mapping (upstream's kubernetes.UserInfo);
 * - `request`: a SubjectAccessReview v1 spec, for webhook match conditions.
 */
import type { Environment } from '@marcbachmann/cel-js'
import { kubernetesEnvironment } from './library/index.js'

export type CelVariable = 'claims' | 'user' | 'request'

/** One label or field selector requirement; list items of declared types must be instances, not plain objects. */
export class SelectorRequirement {
  readonly key: string
  readonly operator: string
  readonly values: string[]
  constructor(r: { key?: string; operator?: string; values?: string[] }) {
    this.key = r.key ?? ''
    this.operator = r.operator ?? ''
    this.values = r.values ?? []
  }
}

const USER_FIELDS = {
  username: 'string',
  uid: 'string',
  groups: 'list<string>',
  extra: 'map<string, list<string>>',
} as const

const SELECTOR_FIELDS = { rawSelector: 'string', requirements: 'list<SelectorRequirement>' } as const

const REQUEST_FIELDS = {
  user: 'string',
  groups: 'list<string>',
  uid: 'string',
  extra: 'map<string, list<string>>',
  resourceAttributes: {
    namespace: 'string',
    verb: 'string',
    group: 'string',
    version: 'string',
    resource: 'string',
    subresource: 'string',
    name: 'string',
    fieldSelector: SELECTOR_FIELDS,
    labelSelector: SELECTOR_FIELDS,
  },
  nonResourceAttributes: { path: 'string', verb: 'string' },
} as const

function base(): Environment {
  return kubernetesEnvironment()
}

const builders: Record<CelVariable, () => Environment> = {
  claims: () => base().registerVariable('claims', 'map<string, dyn>'),
  user: () => base().registerVariable('user', { schema: USER_FIELDS }),
  request: () =>
    base()
      .registerType('SelectorRequirement', {
        ctor: SelectorRequirement,
        fields: { key: 'string', operator: 'string', values: 'list<string>' },
      })
      .registerVariable('request', { schema: REQUEST_FIELDS }),
}

const built = new Map<CelVariable, Environment>()

/** The environment whose only variable is `variable`; built once. */
export function celEnvironment(variable: CelVariable): Environment {
  let env = built.get(variable)
  if (!env) {
    env = builders[variable]()
    built.set(variable, env)
  }
  return env
}
