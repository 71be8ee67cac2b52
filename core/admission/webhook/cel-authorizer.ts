/**
 * The `authorizer` variable of admission CEL (upstream's
 * apiserver/pkg/cel/library/authz.go), evaluated for real: each `check`
 * asks the server's authorizer chain about the requesting user, or about
 * the service account `serviceAccount(ns, name)` names, and answers a
 * Decision. `authorizer.requestResource` is a check prefilled with the
 * request's own group, version, resource, subresource, namespace and name.
 */
import type { Environment } from '@marcbachmann/cel-js'
import type { Attributes, Authorizer as ServerAuthorizer } from '../../authz/authorizer.js'
import type { UserInfo } from '../../machinery/object.js'

export class CelDecision {
  constructor(
    readonly decision: 'allow' | 'deny' | 'no-opinion',
    readonly reasonText: string,
    readonly errorText: string,
  ) {}
}

interface Asker {
  authorizer: ServerAuthorizer
  user: UserInfo
}

async function decide(asker: Asker, attrs: Omit<Attributes, 'user'>): Promise<CelDecision> {
  try {
    const { decision, reason } = await asker.authorizer.authorize({ ...attrs, user: asker.user })
    return new CelDecision(decision, reason, '')
  } catch (err) {
    return new CelDecision('no-opinion', '', err instanceof Error ? err.message : String(err))
  }
}

export class CelPathCheck {
  constructor(
    readonly asker: Asker,
    readonly path: string,
  ) {}
}

export interface ResourceFields {
  group: string
  version: string
  resource: string
  subresource: string
  namespace: string
  name: string
  fieldSelector: string
  labelSelector: string
}

export class CelResourceCheck {
  constructor(
    readonly asker: Asker,
    readonly fields: ResourceFields,
  ) {}
  with(change: Partial<ResourceFields>): CelResourceCheck {
    return new CelResourceCheck(this.asker, { ...this.fields, ...change })
  }
}

export class CelGroupCheck {
  constructor(
    readonly asker: Asker,
    readonly group: string,
  ) {}
}

export class CelAuthorizer {
  readonly requestResource: CelResourceCheck
  constructor(
    readonly asker: Asker,
    request: Omit<ResourceFields, 'fieldSelector' | 'labelSelector'>,
  ) {
    this.requestResource = new CelResourceCheck(asker, { ...request, fieldSelector: '', labelSelector: '' })
  }
}

const serviceAccountUser = (namespace: string, name: string): UserInfo => ({
  username: `system:serviceaccount:${namespace}:${name}`,
  groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`],
})

/** Declares the library's types and functions on `env`, and the `authorizer` variable. */
export function registerAuthorizerLibrary(env: Environment): Environment {
  env
    .registerType('PathCheck', CelPathCheck)
    .registerType('GroupCheck', CelGroupCheck)
    .registerType('ResourceCheck', CelResourceCheck)
    .registerType('Decision', CelDecision)
    .registerType('Authorizer', { ctor: CelAuthorizer, fields: { requestResource: 'ResourceCheck' } })
    .registerFunction('Authorizer.path(string): PathCheck', (a: CelAuthorizer, path: string) => new CelPathCheck(a.asker, path))
    .registerFunction('Authorizer.group(string): GroupCheck', (a: CelAuthorizer, group: string) => new CelGroupCheck(a.asker, group))
    .registerFunction(
      'Authorizer.serviceAccount(string, string): Authorizer',
      (a: CelAuthorizer, namespace: string, name: string) =>
        new CelAuthorizer({ authorizer: a.asker.authorizer, user: serviceAccountUser(namespace, name) }, { group: '', version: '', resource: '', subresource: '', namespace: '', name: '' }),
    )
    .registerFunction('PathCheck.check(string): Decision', (p: CelPathCheck, verb: string) =>
      decide(p.asker, { verb, isResourceRequest: false, path: p.path, namespace: '', apiGroup: '', apiVersion: '', resource: '', subresource: '', name: '' }),
    )
    .registerFunction(
      'GroupCheck.resource(string): ResourceCheck',
      (g: CelGroupCheck, resource: string) =>
        new CelResourceCheck(g.asker, { group: g.group, version: '*', resource, subresource: '', namespace: '', name: '', fieldSelector: '', labelSelector: '' }),
    )
    .registerFunction('ResourceCheck.subresource(string): ResourceCheck', (r: CelResourceCheck, subresource: string) => r.with({ subresource }))
    .registerFunction('ResourceCheck.namespace(string): ResourceCheck', (r: CelResourceCheck, namespace: string) => r.with({ namespace }))
    .registerFunction('ResourceCheck.name(string): ResourceCheck', (r: CelResourceCheck, name: string) => r.with({ name }))
    .registerFunction('ResourceCheck.fieldSelector(string): ResourceCheck', (r: CelResourceCheck, fieldSelector: string) => r.with({ fieldSelector }))
    .registerFunction('ResourceCheck.labelSelector(string): ResourceCheck', (r: CelResourceCheck, labelSelector: string) => r.with({ labelSelector }))
    .registerFunction('ResourceCheck.check(string): Decision', (r: CelResourceCheck, verb: string) => {
      const f = r.fields
      return decide(r.asker, {
        verb,
        isResourceRequest: true,
        path: '',
        namespace: f.namespace,
        apiGroup: f.group,
        apiVersion: f.version,
        resource: f.resource,
        subresource: f.subresource,
        name: f.name,
        ...(f.fieldSelector ? { fieldSelector: f.fieldSelector } : {}),
      })
    })
    .registerFunction('Decision.allowed(): bool', (d: CelDecision) => d.decision === 'allow')
    .registerFunction('Decision.reason(): string', (d: CelDecision) => d.reasonText)
    .registerFunction('Decision.errored(): bool', (d: CelDecision) => d.errorText !== '')
    .registerFunction('Decision.error(): string', (d: CelDecision) => d.errorText)
  return env.registerVariable('authorizer', 'Authorizer')
}
