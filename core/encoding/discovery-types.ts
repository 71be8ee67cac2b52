/**
 * Types the server writes that the generated tables do not hold: discovery
 * (legacy meta/v1 and aggregated apidiscovery.k8s.io/v2) and /version.
 * Fields are listed in upstream's Go declaration order, which is the order
 * encoding/json writes them in.
 */
import type { TypeDef, TypeRef, TypeTable } from '../resources/schema/model.js'

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1'
const DISCOVERY = 'io.k8s.api.apidiscovery.v2'

const text: TypeRef = { scalar: 'string' }
const texts: TypeRef = { array: text }
const ref = (name: string): TypeRef => ({ ref: name })
const list = (name: string): TypeRef => ({ array: { ref: name } })

function type(name: string, fields: [string, TypeRef][]): TypeDef {
  return { name, fields: fields.map(([field, t]) => ({ name: field, type: t })) }
}

const typeMeta: [string, TypeRef][] = [
  ['kind', text],
  ['apiVersion', text],
]

export const discoveryTypes: TypeTable = Object.fromEntries(
  [
    type(`${META}.APIVersions`, [...typeMeta, ['versions', texts], ['serverAddressByClientCIDRs', list(`${META}.ServerAddressByClientCIDR`)]]),
    type(`${META}.ServerAddressByClientCIDR`, [
      ['clientCIDR', text],
      ['serverAddress', text],
    ]),
    type(`${META}.APIGroupList`, [...typeMeta, ['groups', list(`${META}.APIGroup`)]]),
    type(`${META}.APIGroup`, [
      ...typeMeta,
      ['name', text],
      ['versions', list(`${META}.GroupVersionForDiscovery`)],
      ['preferredVersion', ref(`${META}.GroupVersionForDiscovery`)],
      ['serverAddressByClientCIDRs', list(`${META}.ServerAddressByClientCIDR`)],
    ]),
    type(`${META}.GroupVersionForDiscovery`, [
      ['groupVersion', text],
      ['version', text],
    ]),
    type(`${META}.APIResourceList`, [...typeMeta, ['groupVersion', text], ['resources', list(`${META}.APIResource`)]]),
    type(`${META}.APIResource`, [
      ['name', text],
      ['singularName', text],
      ['namespaced', { scalar: 'boolean' }],
      ['group', text],
      ['version', text],
      ['kind', text],
      ['verbs', texts],
      ['shortNames', texts],
      ['categories', texts],
      ['storageVersionHash', text],
    ]),
    type(`${META}.GroupVersionKind`, [
      ['group', text],
      ['version', text],
      ['kind', text],
    ]),
    type(`${DISCOVERY}.APIGroupDiscoveryList`, [
      ...typeMeta,
      ['metadata', ref(`${META}.ListMeta`)],
      ['items', list(`${DISCOVERY}.APIGroupDiscovery`)],
    ]),
    type(`${DISCOVERY}.APIGroupDiscovery`, [
      ...typeMeta,
      ['metadata', ref(`${META}.ObjectMeta`)],
      ['versions', list(`${DISCOVERY}.APIVersionDiscovery`)],
    ]),
    type(`${DISCOVERY}.APIVersionDiscovery`, [
      ['version', text],
      ['resources', list(`${DISCOVERY}.APIResourceDiscovery`)],
      ['freshness', text],
    ]),
    type(`${DISCOVERY}.APIResourceDiscovery`, [
      ['resource', text],
      ['responseKind', ref(`${META}.GroupVersionKind`)],
      ['scope', text],
      ['singularResource', text],
      ['verbs', texts],
      ['shortNames', texts],
      ['categories', texts],
      ['subresources', list(`${DISCOVERY}.APISubresourceDiscovery`)],
    ]),
    type(`${DISCOVERY}.APISubresourceDiscovery`, [
      ['subresource', text],
      ['responseKind', ref(`${META}.GroupVersionKind`)],
      ['acceptedTypes', list(`${META}.GroupVersionKind`)],
      ['verbs', texts],
    ]),
    type('io.k8s.apimachinery.pkg.version.Info', [
      ['major', text],
      ['minor', text],
      ['emulationMajor', text],
      ['emulationMinor', text],
      ['minCompatibilityMajor', text],
      ['minCompatibilityMinor', text],
      ['gitVersion', text],
      ['gitCommit', text],
      ['gitTreeState', text],
      ['buildDate', text],
      ['goVersion', text],
      ['compiler', text],
      ['platform', text],
    ]),
  ].map((t) => [t.name, t]),
)

/** The kinds among them that documents name in `kind` (APIGroupDiscovery items carry none). */
export const discoveryKinds: Readonly<Record<string, string>> = {
  APIVersions: `${META}.APIVersions`,
  APIGroupList: `${META}.APIGroupList`,
  APIGroup: `${META}.APIGroup`,
  APIResourceList: `${META}.APIResourceList`,
  APIGroupDiscoveryList: `${DISCOVERY}.APIGroupDiscoveryList`,
}
