/**
 * What discovery says about aggregated group/versions: `/apis` and
 * `/apis/<group>` from the APIServices themselves (versions by
 * versionPriority, groups by groupPriorityMinimum), and the resources of
 * each from the extension server's own APIResourceList, fetched by the
 * availability probe, turned into the aggregated (apidiscovery.k8s.io/v2) form.
 */
import { isPlainObject } from '../machinery/object.js'
import type { ApiService } from './apiservice.js'

export interface RemoteGroup {
  name: string
  /** Highest versionPriority first, then by version name as upstream's kube-aware sort approximates. */
  versions: ApiService[]
  groupPriorityMinimum: number
}

/** The aggregated group/versions by group, groups by priority (highest first), then name. */
export function remoteGroups(services: Iterable<ApiService>, servedLocally: (group: string) => boolean): RemoteGroup[] {
  const byGroup = new Map<string, ApiService[]>()
  for (const api of services) {
    if (!api.service || servedLocally(api.group)) continue
    byGroup.set(api.group, [...(byGroup.get(api.group) ?? []), api])
  }
  return [...byGroup.entries()]
    .map(([name, versions]) => ({
      name,
      versions: versions.sort((a, b) => b.versionPriority - a.versionPriority || (a.version < b.version ? 1 : -1)),
      groupPriorityMinimum: Math.max(...versions.map((v) => v.groupPriorityMinimum)),
    }))
    .sort((a, b) => b.groupPriorityMinimum - a.groupPriorityMinimum || (a.name < b.name ? -1 : 1))
}

/** The legacy APIGroup of a remote group (`/apis` lists these, `/apis/<group>` serves one). */
export function remoteApiGroup(group: RemoteGroup) {
  const versions = group.versions.map((v) => ({ groupVersion: `${v.group}/${v.version}`, version: v.version }))
  return { name: group.name, versions, preferredVersion: versions[0] }
}

type Resource = {
  name?: unknown
  singularName?: unknown
  namespaced?: unknown
  kind?: unknown
  verbs?: unknown
  shortNames?: unknown
  categories?: unknown
  group?: unknown
  version?: unknown
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [])

/** An extension server's APIResourceList as the resources of an aggregated discovery version. */
export function aggregatedResources(list: unknown, group: string, version: string): Record<string, unknown>[] {
  const resources = (isPlainObject(list) && Array.isArray(list['resources']) ? list['resources'] : []).filter(isPlainObject) as Resource[]
  const top = new Map<string, Record<string, unknown>>()
  const kindOf = (r: Resource) => ({
    group: typeof r.group === 'string' ? r.group : group,
    version: typeof r.version === 'string' ? r.version : version,
    kind: String(r.kind ?? ''),
  })
  for (const r of resources) {
    const name = String(r.name ?? '')
    if (!name || name.includes('/')) continue
    const entry: Record<string, unknown> = {
      resource: name,
      responseKind: kindOf(r),
      scope: r.namespaced === true ? 'Namespaced' : 'Cluster',
      singularResource: String(r.singularName ?? ''),
      verbs: strings(r.verbs),
    }
    if (strings(r.shortNames).length) entry['shortNames'] = strings(r.shortNames)
    if (strings(r.categories).length) entry['categories'] = strings(r.categories)
    top.set(name, entry)
  }
  for (const r of resources) {
    const [parent, sub] = String(r.name ?? '').split('/')
    const owner = parent ? top.get(parent) : undefined
    if (!owner || !sub) continue
    const subs = (owner['subresources'] as Record<string, unknown>[] | undefined) ?? []
    subs.push({ subresource: sub, responseKind: kindOf(r), verbs: strings(r.verbs) })
    owner['subresources'] = subs
  }
  return [...top.values()]
}

/** A remote group as an item of the aggregated `/apis` list; `resourcesOf` gives what was last fetched. */
export function aggregatedRemoteGroup(group: RemoteGroup, resourcesOf: (api: ApiService) => unknown) {
  return {
    metadata: { name: group.name, creationTimestamp: null },
    versions: group.versions.map((api) => {
      const list = resourcesOf(api)
      return {
        version: api.version,
        resources: list === undefined ? [] : aggregatedResources(list, api.group, api.version),
        freshness: list === undefined || !api.available ? 'Stale' : 'Current',
      }
    }),
  }
}
