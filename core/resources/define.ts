/**
 * Building catalogue entries with upstream's conventions as defaults, so that
 * each entry file states only what is particular to its resource: the list
 * kind is `<Kind>List`, the singular the lowercase kind, every verb served,
 * names DNS-1123 subdomains, the type found from the group/version/kind.
 */
import type { KubeObject } from '../machinery/object.js'
import { ALL_VERBS, type ResourceEntry, type SubresourceEntry } from './catalogue.js'
import { dnsSubdomainName } from './names.js'
import { typeForKind, typeTable } from './schema/index.js'
import { decodeAsInSteps } from './schema/json-decoding.js'

export type EntrySpec = Omit<ResourceEntry, 'listKind' | 'singular' | 'verbs' | 'typeName' | 'validateName' | 'strategy' | 'columns'> &
  Partial<Pick<ResourceEntry, 'listKind' | 'singular' | 'verbs' | 'typeName' | 'validateName' | 'strategy' | 'columns'>>

/** Upstream's JSON decoder for the kind's type; see ResourceEntry.decode. */
function typedDecoder(typeName: string, kind: string, version: string): ResourceEntry['decode'] {
  const def = typeTable[typeName]
  return def ? (obj) => decodeAsInSteps(obj, def, typeTable, kind, version) : undefined
}

export function defineResource(spec: EntrySpec): ResourceEntry {
  const typeName = spec.typeName ?? typeForKind(spec.group, spec.version, spec.kind)?.name
  if (!typeName) throw new Error(`no type for ${spec.group}/${spec.version} ${spec.kind}: add its group/version to tools/gen-types.ts`)
  return {
    ...spec,
    listKind: spec.listKind ?? `${spec.kind}List`,
    singular: spec.singular ?? spec.kind.toLowerCase(),
    verbs: spec.verbs ?? ALL_VERBS,
    typeName,
    validateName: spec.validateName ?? dnsSubdomainName,
    strategy: spec.strategy ?? {},
    decode: spec.decode ?? typedDecoder(typeName, spec.kind, spec.version),
    columns: spec.columns ?? [],
  }
}

/** Verbs of a resource that is never deleted as a collection (namespaces). */
export const NO_DELETECOLLECTION = ALL_VERBS.filter((v) => v !== 'deletecollection')

/**
 * `<resource>/status`: the status half of an object, read and written on its
 * own; `keepsStoredMetadata` names the metadata its writes leave as stored
 * (see SubresourceEntry).
 */
/**
 * A new object starts with the status a controller has not written yet:
 * upstream's zero status, with the counters its JSON always carries (Go
 * writes an int field without `omitempty` even when it is 0).
 */
export const freshStatus =
  (zero: Record<string, number> = {}) =>
  (obj: KubeObject): void => {
    obj['status'] = { ...zero }
  }

export function statusSubresource(kind: string, keepsStoredMetadata?: SubresourceEntry['keepsStoredMetadata']): SubresourceEntry {
  return { name: 'status', kind, verbs: ['get', 'patch', 'update'], ...(keepsStoredMetadata ? { keepsStoredMetadata } : {}) }
}

/** `<resource>/scale`: replicas as an autoscaling/v1 Scale, for `kubectl scale` and autoscalers. */
export const scaleSubresource: SubresourceEntry = {
  name: 'scale',
  kind: 'Scale',
  group: 'autoscaling',
  version: 'v1',
  verbs: ['get', 'patch', 'update'],
}

/** A streaming or proxying endpoint, served in upstream by the node agent or the proxy. */
export function connectSubresource(name: string, kind: string, verbs: SubresourceEntry['verbs']): SubresourceEntry {
  return { name, kind, verbs, connect: true }
}

/** The proxy verbs upstream serves on `pods/proxy`, `services/proxy` and `nodes/proxy`. */
export const PROXY_VERBS: SubresourceEntry['verbs'] = ['create', 'delete', 'get', 'patch', 'update']
