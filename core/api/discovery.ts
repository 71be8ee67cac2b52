/**
 * Discovery, derived from the catalogue: legacy (`APIVersions`,
 * `APIGroupList`, `APIGroup`, `APIResourceList`) and aggregated
 * (apidiscovery.k8s.io/v2, chosen by the Accept header).
 */
import type { Catalogue, ResourceEntry, SubresourceEntry } from '../resources/catalogue.js'
import { groupVersion } from '../resources/catalogue.js'

const sortedVerbs = (verbs: readonly string[]) => [...verbs].sort()

function aggregatedResource(e: ResourceEntry) {
  const r: Record<string, unknown> = {
    resource: e.resource,
    responseKind: { group: e.group, version: e.version, kind: e.kind },
    scope: e.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: e.singular,
    verbs: sortedVerbs(e.verbs),
  }
  if (e.shortNames?.length) r['shortNames'] = e.shortNames
  if (e.categories?.length) r['categories'] = e.categories
  if (e.subresources?.length)
    r['subresources'] = bySubresourceName(e.subresources).map((s) => ({
      subresource: s.name,
      responseKind: { group: s.group ?? e.group, version: s.version ?? e.version, kind: s.kind },
      verbs: sortedVerbs(s.verbs),
    }))
  return r
}

function bySubresourceName(subresources: readonly SubresourceEntry[]): SubresourceEntry[] {
  return [...subresources].sort((a, b) => (a.name < b.name ? -1 : 1))
}

/** A group/version's resources in name order, as upstream lists them. */
function resourcesOf(catalogue: Catalogue, group: string, version: string): ResourceEntry[] {
  return catalogue.inGroupVersion(group, version).sort((a, b) => (a.resource < b.resource ? -1 : 1))
}

function groupNames(catalogue: Catalogue): string[] {
  return [...new Set(catalogue.entries.map((e) => e.group))]
}

function versionsOf(catalogue: Catalogue, group: string): string[] {
  return [...new Set(catalogue.entries.filter((e) => e.group === group).map((e) => e.version))]
}

/** `/api` (core only) or `/apis` (every other group) as an APIGroupDiscoveryList. */
export function aggregatedDiscovery(catalogue: Catalogue, legacy: boolean) {
  const groups = groupNames(catalogue).filter((g) => (g === '') === legacy)
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: 'apidiscovery.k8s.io/v2',
    metadata: {},
    items: groups.map((group) => ({
      metadata: { name: group, creationTimestamp: null },
      versions: versionsOf(catalogue, group).map((version) => ({
        version,
        resources: resourcesOf(catalogue, group, version).map(aggregatedResource),
        freshness: 'Current',
      })),
    })),
  }
}

export function apiVersions(serverAddress: string) {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  }
}

function apiGroup(catalogue: Catalogue, name: string) {
  const versions = versionsOf(catalogue, name).map((version) => ({
    groupVersion: `${name}/${version}`,
    version,
  }))
  return { name, versions, preferredVersion: versions[0] }
}

export function apiGroupList(catalogue: Catalogue) {
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: groupNames(catalogue)
      .filter((g) => g !== '')
      .map((g) => apiGroup(catalogue, g)),
  }
}

export function apiGroupDocument(catalogue: Catalogue, name: string) {
  if (!name || !versionsOf(catalogue, name).length) return undefined
  return { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(catalogue, name) }
}

/**
 * `/api/v1` or `/apis/<group>/<version>`; `hashes` gives each stored
 * resource's storageVersionHash (see storage-version-hash.ts).
 */
export function apiResourceList(catalogue: Catalogue, group: string, version: string, hashes?: ReadonlyMap<ResourceEntry, string>) {
  const entries = resourcesOf(catalogue, group, version)
  if (!entries.length) return undefined
  const resources: Record<string, unknown>[] = []
  for (const e of entries) {
    const r: Record<string, unknown> = {
      name: e.resource,
      singularName: e.singular,
      namespaced: e.namespaced,
      kind: e.kind,
      verbs: sortedVerbs(e.verbs),
    }
    if (e.shortNames?.length) r['shortNames'] = e.shortNames
    if (e.categories?.length) r['categories'] = e.categories
    const hash = hashes?.get(e)
    if (hash) r['storageVersionHash'] = hash
    resources.push(r)
    for (const s of bySubresourceName(e.subresources ?? [])) {
      const sub: Record<string, unknown> = {
        name: `${e.resource}/${s.name}`,
        singularName: '',
        namespaced: e.namespaced,
        kind: s.kind,
        verbs: sortedVerbs(s.verbs),
      }
      if (s.group !== undefined) sub['group'] = s.group
      if (s.version !== undefined) sub['version'] = s.version
      resources.push(sub)
    }
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: groupVersion({ group, version }), resources }
}
