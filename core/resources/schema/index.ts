/**
 * The merged type table: every generated package (see tools/gen-types.ts) in
 * one lookup, plus the group/version/kind index used to find the type of a
 * request or response body.
 */
import { generatedKinds, generatedTypes } from './generated/index.js'
import type { TypeDef, TypeTable } from './model.js'

export type { FieldDef, JsonForms, Scalar, TypeDef, TypeRef, TypeTable } from './model.js'
export { jsonFormOf } from './model.js'

export const typeTable: TypeTable = generatedTypes

/** The type served as `group/version, Kind=kind`; `''` is the core group. */
export function typeForKind(group: string, version: string, kind: string): TypeDef | undefined {
  const name = generatedKinds[`${group}/${version}/${kind}`]
  return name === undefined ? undefined : typeTable[name]
}

/**
 * Every group/version/kind the named type is served as. Most kinds have one;
 * meta types such as DeleteOptions are registered in every group version.
 */
export function kindsOfType(name: string): { group: string; version: string; kind: string }[] {
  const out: { group: string; version: string; kind: string }[] = []
  for (const [gvk, typeName] of Object.entries(generatedKinds)) {
    if (typeName !== name) continue
    const [group = '', version = '', kind = ''] = gvk.split('/')
    out.push({ group, version, kind })
  }
  return out
}
