/**
 * Go type names as upstream's messages print them (`%T`, and the
 * converter's `(v1.Deployment)`): a built-in kind's internal type lives in
 * a package named for its group (`core` for the legacy group and for
 * events.k8s.io, whose Event is core's; the group's first label otherwise),
 * a versioned type in a package named for its version, and a custom
 * resource is unstructured.
 */
import type { ResourceEntry } from '../resources/catalogue.js'

/** The package of a group's internal types. */
export function goInternalPackage(group: string): string {
  if (group === '' || group === 'events.k8s.io') return 'core'
  if (group === 'internal.apiserver.k8s.io') return 'apiserverinternal'
  return group.split('.')[0]!
}

/** The internal type of an entry's objects (or of their list), with the pointer `%T` prints: `*core.ConfigMap`, `*unstructured.UnstructuredList`. */
export function goInternalTypeName(entry: Pick<ResourceEntry, 'group' | 'kind' | 'schema'>, list = false): string {
  if (entry.schema) return `*unstructured.Unstructured${list ? 'List' : ''}`
  return `*${goInternalPackage(entry.group)}.${entry.kind}${list ? 'List' : ''}`
}

/** The version of an apiVersion (`apps/v1` → `v1`), the package its versioned types live in. */
export function versionOf(apiVersion: string): string {
  return apiVersion.slice(apiVersion.indexOf('/') + 1)
}
