/**
 * What both policy plugins read: the policies and bindings of their kind,
 * the namespaces (for namespace selectors and `namespaceObject`) and the
 * parameter objects, each from a watch-fed index, so that a change acts as
 * soon as its watch event arrives. Also what one evaluation sees of the
 * request: the object and old object in the version the policy matched,
 * the AdmissionRequest, and the namespace.
 */
import type { Authorizer as ServerAuthorizer } from '../../authz/authorizer.js'
import type { Catalogue, ResourceEntry } from '../../resources/catalogue.js'
import { namespaces } from '../../resources/core/namespaces.js'
import type { KubeObject } from '../../machinery/object.js'
import type { AdmissionAttributes } from '../attributes.js'
import { carriesResourceKind, kindOf } from '../webhook/versions.js'
import { authorizerFor } from './cel-environment.js'
import { POLICY_INPUT_LIMITS, toCel } from './cel-values.js'
import type { MatchContext, MatchedAs } from './matching.js'
import type { InformerFactory } from '../../client/informer-factory.js'
import type { SharedInformer } from '../../client/informer.js'
import { ParamIndexes, type ParamKind } from './params.js'

export interface PolicyWithBindings {
  readonly policy: KubeObject
  readonly bindings: readonly KubeObject[]
}

const nameOf = (o: KubeObject): string => o.metadata.name ?? ''
const specOf = (o: KubeObject): Record<string, unknown> => (o['spec'] as Record<string, unknown> | undefined) ?? {}


/** Name order as upstream's Go sorts strings (code unit by code unit, no locale's collation). */
function byName(x: KubeObject, y: KubeObject): number {
  const a = nameOf(x)
  const b = nameOf(y)
  return a < b ? -1 : a > b ? 1 : 0
}
export class PolicySource {
  private readonly policies: SharedInformer
  private readonly bindings: SharedInformer
  private readonly namespaces: SharedInformer
  private readonly unsubscribe: (() => void)[]
  readonly params: ParamIndexes
  private grouped: PolicyWithBindings[] | undefined
  readonly ready: Promise<void>

  constructor(
    informers: InformerFactory,
    private readonly catalogue: Catalogue,
    policyEntry: ResourceEntry,
    bindingEntry: ResourceEntry,
    /** Called after a policy changed (the type-checking controller). */
    onPolicyChange?: (policies: readonly KubeObject[]) => void,
  ) {
    this.policies = informers.informer(policyEntry)
    this.bindings = informers.informer(bindingEntry)
    this.namespaces = informers.informer(namespaces)
    this.params = new ParamIndexes(informers, catalogue)
    const regroup = (): void => {
      this.grouped = undefined
    }
    this.unsubscribe = [
      this.policies.onChange(() => {
        regroup()
        this.startParamIndexes()
        onPolicyChange?.(this.policies.list())
      }),
      this.bindings.onChange(regroup),
    ]
    this.ready = Promise.all([this.policies.ready, this.bindings.ready, this.namespaces.ready]).then(() => undefined)
  }

  /** A policy's parameter kind is watched from when the policy appears, so its objects are there by the first request. */
  private startParamIndexes(): void {
    for (const policy of this.policies.list()) {
      const kind = specOf(policy)['paramKind'] as ParamKind | undefined
      const entry = kind ? this.params.entryOf(kind) : undefined
      if (entry) this.params.indexOf(entry)
    }
  }

  /** Every policy with the bindings that name it, in name order (upstream sorts its hooks alike). */
  current(): readonly PolicyWithBindings[] {
    if (!this.grouped) {
      const byPolicy = new Map<string, KubeObject[]>()
      for (const b of this.bindings.list().sort(byName)) {
        const policyName = String(specOf(b)['policyName'] ?? '')
        byPolicy.set(policyName, [...(byPolicy.get(policyName) ?? []), b])
      }
      this.grouped = this.policies
        .list()
        .sort(byName)
        .map((policy) => ({ policy, bindings: byPolicy.get(nameOf(policy)) ?? [] }))
        .filter((p) => p.bindings.length > 0)
    }
    return this.grouped
  }

  matchContext(): MatchContext {
    return { catalogue: this.catalogue, namespace: (name) => this.namespaces.get('', name) }
  }

  namespace(name: string): KubeObject | undefined {
    return this.namespaces.get('', name)
  }

  /** Stops following the informers (the server stops them). */
  stop(): void {
    for (const unsubscribe of this.unsubscribe) unsubscribe()
  }
}

/** `obj` in the version of `to`, through the stored form, when the policy matched an equivalent resource. */
export async function inVersion(obj: KubeObject | undefined, from: ResourceEntry, to: ResourceEntry): Promise<KubeObject | undefined> {
  if (!obj || from === to) return obj
  const stored = from.conversion ? await from.conversion.toStorage(structuredClone(obj)) : obj
  return to.conversion ? await to.conversion.fromStorage(structuredClone(stored)) : stored
}

/**
 * One of the request's objects as the matched version shows it. A
 * subresource's object of another kind (a Scale, an Eviction) is the same
 * in every version of the resource: only the resource's own kind converts.
 */
export function requestObjectIn(attrs: AdmissionAttributes, obj: KubeObject | undefined, from: ResourceEntry, to: ResourceEntry): Promise<KubeObject | undefined> {
  return carriesResourceKind(attrs.entry, attrs.subresource) ? inVersion(obj, from, to) : Promise.resolve(obj)
}

/** upstream's CreateNamespaceObject: the namespace as policies see it, without its managed fields. */
function namespaceView(ns: KubeObject | undefined): unknown {
  if (!ns) return null
  const { managedFields: _managed, ...metadata } = ns.metadata as Record<string, unknown>
  return { metadata, spec: ns['spec'] ?? {}, status: ns['status'] ?? {} }
}

export interface RequestView {
  /** Everything an expression sees but `variables`. */
  activation: Record<string, unknown>
  /** How many values it holds (at most POLICY_INPUT_LIMITS.maxValues). */
  size: number
}

/** The activation of one evaluation: `object` and `oldObject` in the matched version, the request, params, namespace, authorizer. */
export function requestView(
  attrs: AdmissionAttributes,
  matched: MatchedAs,
  versioned: { object: KubeObject | undefined; oldObject: KubeObject | undefined },
  param: KubeObject | null,
  namespace: KubeObject | undefined,
  server: ServerAuthorizer,
  uid: string,
): RequestView {
  const budget = { valuesLeft: POLICY_INPUT_LIMITS.maxValues }
  const entry = attrs.entry
  const user = attrs.user
  const request = {
    uid,
    kind: matched.kind,
    resource: matched.resource,
    subResource: attrs.subresource ?? '',
    requestKind: kindOf(entry, attrs.subresource),
    requestResource: { group: entry.group, version: entry.version, resource: entry.resource },
    requestSubResource: attrs.subresource ?? '',
    name: attrs.name,
    namespace: attrs.namespace,
    operation: attrs.operation,
    userInfo: { username: user.username ?? '', uid: user.uid ?? '', groups: user.groups ?? [], extra: user.extra ?? {} },
    dryRun: attrs.dryRun,
    options: attrs.options ?? null,
  }
  // The Namespace itself has no namespace object, as upstream's dispatcher leaves it out.
  const isNamespace = entry.group === '' && entry.resource === 'namespaces'
  const activation: Record<string, unknown> = {
    object: toCel(versioned.object ?? null, budget),
    oldObject: toCel(versioned.oldObject ?? null, budget),
    params: toCel(param, budget),
    namespaceObject: toCel(isNamespace ? null : namespaceView(namespace), budget),
    request: toCel(request, budget),
    authorizer: authorizerFor(server, user, {
      group: matched.resource.group,
      version: matched.resource.version,
      resource: matched.resource.resource,
      subresource: attrs.subresource ?? '',
      namespace: attrs.namespace,
      name: attrs.name,
    }),
  }
  return { activation, size: POLICY_INPUT_LIMITS.maxValues - budget.valuesLeft }
}
