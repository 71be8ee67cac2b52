/**
 * The CEL environment admission policies run in (upstream's
 * admission/plugin/cel with the Kubernetes libraries): `object`,
 * `oldObject`, `params` and `namespaceObject` are dyn, `request` the
 * AdmissionRequest, `variables` the policy's named expressions, and
 * `authorizer` the authorization library, here wired to the server's own
 * authorizer chain. Mutations add `JSONPatch` (written as a map, see
 * object-literals.ts) and `jsonpatch.escapeKey`.
 *
 * The objects are checked where they are written (resources/
 * admissionregistration/cel.ts); this environment evaluates them.
 */
import type { Environment } from '@marcbachmann/cel-js'
import type { Authorizer as ServerAuthorizer, Attributes } from '../../authz/authorizer.js'
import { kubernetesEnvironment } from '../../cel/library/index.js'
import type { UserInfo } from '../../machinery/object.js'
import { ADMISSION_REQUEST_FIELDS } from '../../resources/admissionregistration/cel.js'

/** What an authorizer check asks about: the user, and a resource or a path. */
interface CheckTarget {
  readonly user: UserInfo
  readonly server: ServerAuthorizer
  /** Decisions of one request, shared by its checks (upstream's caching authorizer). */
  readonly cache: Map<string, Promise<Decision>>
}

export class Decision {
  constructor(
    readonly decision: 'allow' | 'deny' | 'no-opinion',
    readonly reasonText: string,
    readonly errorText: string,
  ) {}
}

async function decide(target: CheckTarget, attrs: Omit<Attributes, 'user'>): Promise<Decision> {
  const key = JSON.stringify([target.user.username, target.user.groups, attrs])
  let decision = target.cache.get(key)
  if (!decision) {
    decision = target.server.authorize({ ...attrs, user: target.user }).then(
      (d) => new Decision(d.decision, d.reason, ''),
      (err: unknown) => new Decision('no-opinion', '', err instanceof Error ? err.message : String(err)),
    )
    target.cache.set(key, decision)
  }
  return decision
}

export class PathCheck {
  constructor(
    readonly target: CheckTarget,
    readonly path: string,
  ) {}
}

export class GroupCheck {
  constructor(
    readonly target: CheckTarget,
    readonly group: string,
  ) {}
}

export class ResourceCheck {
  constructor(
    readonly target: CheckTarget,
    readonly group: string,
    readonly resource: string,
    readonly version = '*',
    readonly subresource = '',
    readonly namespace = '',
    readonly name = '',
    readonly fieldSelector = '',
  ) {}

  with(change: Partial<Pick<ResourceCheck, 'subresource' | 'namespace' | 'name' | 'fieldSelector'>>): ResourceCheck {
    const next = { ...this, ...change }
    return new ResourceCheck(this.target, next.group, next.resource, next.version, next.subresource, next.namespace, next.name, next.fieldSelector)
  }
}

export class Authorizer {
  readonly requestResource: ResourceCheck
  constructor(
    readonly target: CheckTarget,
    request: { group: string; version: string; resource: string; subresource: string; namespace: string; name: string },
  ) {
    this.requestResource = new ResourceCheck(target, request.group, request.resource, request.version, request.subresource, request.namespace, request.name)
  }
}

/** The `authorizer` variable for a request by `user`. */
export function authorizerFor(
  server: ServerAuthorizer,
  user: UserInfo,
  request: { group: string; version: string; resource: string; subresource: string; namespace: string; name: string },
): Authorizer {
  return new Authorizer({ user, server, cache: new Map() }, request)
}

function serviceAccountUser(namespace: string, name: string): UserInfo {
  return {
    username: `system:serviceaccount:${namespace}:${name}`,
    uid: '',
    groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`],
    extra: {},
  }
}

class JsonPatchLibrary {}

function registerAuthorizer(env: Environment): Environment {
  return env
    .registerType('PathCheck', PathCheck)
    .registerType('GroupCheck', GroupCheck)
    .registerType('ResourceCheck', ResourceCheck)
    .registerType('Decision', Decision)
    .registerType('Authorizer', { ctor: Authorizer, fields: { requestResource: 'ResourceCheck' } })
    .registerFunction('Authorizer.path(string): PathCheck', (a: Authorizer, path: string) => new PathCheck(a.target, path))
    .registerFunction('Authorizer.group(string): GroupCheck', (a: Authorizer, group: string) => new GroupCheck(a.target, group))
    .registerFunction(
      'Authorizer.serviceAccount(string, string): Authorizer',
      (a: Authorizer, namespace: string, name: string) =>
        new Authorizer({ ...a.target, user: serviceAccountUser(namespace, name) }, { ...a.requestResource, group: '', resource: '', version: '' }),
    )
    .registerFunction('PathCheck.check(string): Decision', (p: PathCheck, verb: string) =>
      decide(p.target, { verb, isResourceRequest: false, path: p.path, namespace: '', apiGroup: '', apiVersion: '', resource: '', subresource: '', name: '' }),
    )
    .registerFunction('GroupCheck.resource(string): ResourceCheck', (g: GroupCheck, resource: string) => new ResourceCheck(g.target, g.group, resource))
    .registerFunction('ResourceCheck.subresource(string): ResourceCheck', (r: ResourceCheck, subresource: string) => r.with({ subresource }))
    .registerFunction('ResourceCheck.namespace(string): ResourceCheck', (r: ResourceCheck, namespace: string) => r.with({ namespace }))
    .registerFunction('ResourceCheck.name(string): ResourceCheck', (r: ResourceCheck, name: string) => r.with({ name }))
    .registerFunction('ResourceCheck.fieldSelector(string): ResourceCheck', (r: ResourceCheck, fieldSelector: string) => r.with({ fieldSelector }))
    // Label selectors narrow nothing any authorizer here decides on; the check is the resource's.
    .registerFunction('ResourceCheck.labelSelector(string): ResourceCheck', (r: ResourceCheck) => r)
    .registerFunction('ResourceCheck.check(string): Decision', (r: ResourceCheck, verb: string) =>
      decide(r.target, {
        verb,
        isResourceRequest: true,
        path: '',
        namespace: r.namespace,
        apiGroup: r.group,
        apiVersion: r.version,
        resource: r.resource,
        subresource: r.subresource,
        name: r.name,
        ...(r.fieldSelector ? { fieldSelector: r.fieldSelector } : {}),
      }),
    )
    .registerFunction('Decision.allowed(): bool', (d: Decision) => d.decision === 'allow')
    .registerFunction('Decision.reason(): string', (d: Decision) => d.reasonText)
    .registerFunction('Decision.errored(): bool', (d: Decision) => d.errorText !== '')
    .registerFunction('Decision.error(): string', (d: Decision) => d.errorText)
    .registerVariable('authorizer', 'Authorizer')
}

/** RFC 6901's escaping of one key of a JSON pointer (`~` then `/`). */
export function escapeJsonPointerKey(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1')
}

let built: Environment | undefined

/** The environment every policy expression is evaluated in; built once. */
export function policyEnvironment(): Environment {
  if (!built) {
    const env = kubernetesEnvironment()
      .registerVariable('object', 'dyn')
      .registerVariable('oldObject', 'dyn')
      .registerVariable('namespaceObject', 'dyn')
      .registerVariable('params', 'dyn')
      .registerVariable('variables', 'map<string, dyn>')
      .registerVariable('request', { schema: ADMISSION_REQUEST_FIELDS })
      .registerType('JsonPatchLibrary', JsonPatchLibrary)
      .registerConstant('jsonpatch', 'JsonPatchLibrary', new JsonPatchLibrary())
      .registerFunction('JsonPatchLibrary.escapeKey(string): string', (_l: JsonPatchLibrary, key: string) => escapeJsonPointerKey(key))
    built = registerAuthorizer(env)
  }
  return built
}
