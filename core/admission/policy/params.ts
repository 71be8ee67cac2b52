/**
 * Parameter objects of policy bindings (upstream's CollectParams): the
 * policy's `paramKind` names a served kind, the binding's `paramRef` one
 * object by name or several by label selector, in `paramRef.namespace` or,
 * for a namespaced kind, the request's namespace. Each parameter object is
 * one evaluation of the policy; none found is an error or nothing to do,
 * as `parameterNotFoundAction` says. Objects are read from a watch-fed index
 * per kind, started when a policy first names the kind.
 */
import { type LabelSelectorObject, labelSelectorFromObject } from '../../machinery/label-selector.js'
import type { Catalogue, ResourceEntry } from '../../resources/catalogue.js'
import type { KubeObject } from '../../machinery/object.js'
import type { InformerFactory } from '../../client/informer-factory.js'
import type { SharedInformer } from '../../client/informer.js'

export interface ParamKind {
  apiVersion?: string
  kind?: string
}

export interface ParamRef {
  name?: string
  namespace?: string
  selector?: LabelSelectorObject
  parameterNotFoundAction?: 'Allow' | 'Deny'
}

/** Go's print of a ParamKind, which upstream's messages carry. */
export function paramKindText(kind: ParamKind): string {
  return `&ParamKind{APIVersion:${kind.apiVersion ?? ''},Kind:${kind.kind ?? ''},}`
}

/** The shared informers of parameter kinds, one per served kind asked for. */
export class ParamIndexes {
  constructor(
    private readonly informers: InformerFactory,
    private readonly catalogue: Catalogue,
  ) {}

  /** The served resource of a kind (`v1`, `ConfigMap`), undefined when none serves it. */
  entryOf(kind: ParamKind): ResourceEntry | undefined {
    const apiVersion = kind.apiVersion ?? ''
    const [group, version] = apiVersion.includes('/') ? apiVersion.split('/', 2) : ['', apiVersion]
    return this.catalogue.entries.find((e) => e.group === group && e.version === version && e.kind === kind.kind && !e.virtualCreate)
  }

  /** The informer of a kind, started on first use. */
  indexOf(entry: ResourceEntry): SharedInformer {
    return this.informers.informer(entry)
  }
}

export type ParamsOutcome = { params: (KubeObject | null)[] } | { error: string }

/** The parameter objects to evaluate a binding with; `[null]` when the policy or binding takes none. */
export async function collectParams(
  paramKind: ParamKind | undefined,
  paramRef: ParamRef | undefined,
  requestNamespace: string,
  indexes: ParamIndexes,
): Promise<ParamsOutcome> {
  if (!paramKind || !paramRef) return { params: [null] }
  const entry = indexes.entryOf(paramKind)
  if (!entry) return { error: `paramKind kind \`${paramKindText(paramKind)}\` not known` }
  const index = indexes.indexOf(entry)
  await index.ready
  let namespace: string | undefined
  if (entry.namespaced) {
    namespace = paramRef.namespace || requestNamespace
    if (!namespace) return { error: 'cannot use namespaced paramRef in policy binding that matches cluster-scoped resources' }
  } else if (paramRef.namespace) {
    return { error: 'paramRef.namespace must not be provided for a cluster-scoped `paramKind`' }
  } else namespace = ''
  let params: KubeObject[]
  if (paramRef.name) {
    const found = index.get(namespace, paramRef.name)
    params = found ? [found] : []
  } else if (paramRef.selector) {
    let selector
    try {
      selector = labelSelectorFromObject(paramRef.selector)
    } catch (err) {
      return { error: err instanceof Error ? err.message : String(err) }
    }
    params = index.list(namespace).filter((o) => selector.matches(o.metadata.labels as Record<string, string> | undefined))
  } else return { error: 'one of name or selector must be provided' }
  if (params.length === 0 && (paramRef.parameterNotFoundAction ?? 'Deny') === 'Deny')
    return { error: 'no params found for policy binding with `Deny` parameterNotFoundAction' }
  return { params }
}
