/**
 * The merged type table: every generated package (see tools/gen-types.ts) in
 * one lookup, plus the group/version/kind index used to find the type of a
 * request or response body.
 */
import { generatedKinds, generatedTypes } from './generated/index.js'
import type { TypeDef, TypeTable } from './model.js'

export type { FieldDef, JsonForms, Scalar, TypeDef, TypeRef, TypeTable } from './model.js'
export { fieldsByName, jsonFormOf } from './model.js'

export const typeTable: TypeTable = generatedTypes

/** The type served as `group/version, Kind=kind`; `''` is the core group. */
export function typeForKind(group: string, version: string, kind: string): TypeDef | undefined {
  const name = generatedKinds[`${group}/${version}/${kind}`]
  return name === undefined ? undefined : typeTable[name]
}

type GroupVersionKind = { group: string; version: string; kind: string }

/** generatedKinds turned around (type name to the kinds it is served as), made at the first question. */
let kindsByType: Map<string, GroupVersionKind[]> | undefined

/**
 * Every group/version/kind the named type is served as. Most kinds have one;
 * meta types such as DeleteOptions are registered in every group version.
 */
export function kindsOfType(name: string): GroupVersionKind[] {
  if (!kindsByType) {
    kindsByType = new Map()
    for (const [gvk, typeName] of Object.entries(generatedKinds)) {
      const [group = '', version = '', kind = ''] = gvk.split('/')
      let kinds = kindsByType.get(typeName)
      if (!kinds) kindsByType.set(typeName, (kinds = []))
      kinds.push({ group, version, kind })
    }
  }
  // Copies: the caller may put them in a document of its own.
  return (kindsByType.get(name) ?? []).map((gvk) => ({ ...gvk }))
}
