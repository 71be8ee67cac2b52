/**
 * Which names a CustomResourceDefinition may be served under, as upstream's
 * naming controller decides: its requested names are accepted unless another
 * definition of the same group already has one of them accepted; a name in
 * conflict keeps what was accepted before and the reason says which.
 */
import type {
  CustomResourceDefinition,
  CustomResourceDefinitionCondition,
  CustomResourceDefinitionNames,
} from '../resources/apiextensions/types.js'

export interface NamingDecision {
  acceptedNames: CustomResourceDefinitionNames
  namesAccepted: CustomResourceDefinitionCondition
}

/** The names `crd` asks for, with upstream's defaults for singular and listKind. */
export function requestedNames(crd: CustomResourceDefinition): CustomResourceDefinitionNames {
  const n = crd.spec.names
  const out: CustomResourceDefinitionNames = {
    plural: n.plural,
    singular: n.singular || n.kind.toLowerCase(),
    kind: n.kind,
    listKind: n.listKind || `${n.kind}List`,
  }
  if (n.shortNames?.length) out.shortNames = [...n.shortNames]
  if (n.categories?.length) out.categories = [...n.categories]
  return out
}

/** Decides the accepted names of `crd` among `others` (every other definition). */
export function decideNames(crd: CustomResourceDefinition, others: readonly CustomResourceDefinition[]): NamingDecision {
  const wanted = requestedNames(crd)
  const before = crd.status?.acceptedNames
  const resources = new Set<string>()
  const kinds = new Set<string>()
  for (const other of others) {
    if (other.spec.group !== crd.spec.group || other.metadata.name === crd.metadata.name) continue
    const names = other.status?.acceptedNames
    if (!names) continue
    for (const n of [names.plural, names.singular, ...(names.shortNames ?? [])]) if (n) resources.add(n)
    for (const n of [names.kind, names.listKind]) if (n) kinds.add(n)
  }
  const accepted: CustomResourceDefinitionNames = { plural: before?.plural ?? '', kind: before?.kind ?? '' }
  const conflicts: { reason: string; message: string }[] = []
  const take = <K extends keyof CustomResourceDefinitionNames>(key: K, taken: boolean, reason: string, value: string): void => {
    if (taken) {
      conflicts.push({ reason, message: `${JSON.stringify(value)} is already in use` })
      if (before?.[key] !== undefined) accepted[key] = before[key]
    } else if (wanted[key] !== undefined) accepted[key] = wanted[key]
  }
  take('plural', resources.has(wanted.plural), 'PluralConflict', wanted.plural)
  take('singular', resources.has(wanted.singular ?? ''), 'SingularConflict', wanted.singular ?? '')
  const shortTaken = (wanted.shortNames ?? []).find((s) => resources.has(s))
  take('shortNames', shortTaken !== undefined, 'ShortNamesConflict', shortTaken ?? '')
  take('kind', kinds.has(wanted.kind), 'KindConflict', wanted.kind)
  take('listKind', kinds.has(wanted.listKind ?? ''), 'ListKindConflict', wanted.listKind ?? '')
  // Categories may be shared by any number of resources.
  if (wanted.categories) accepted.categories = wanted.categories
  const first = conflicts[0]
  const namesAccepted: CustomResourceDefinitionCondition = first
    ? { type: 'NamesAccepted', status: 'False', reason: first.reason, message: first.message }
    : { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' }
  return { acceptedNames: first ? accepted : wanted, namesAccepted }
}
