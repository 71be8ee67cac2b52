/**
 * Where upstream reports a CRD's per-version fields. Before validating, it
 * converts a v1 CRD to its internal form, which moves `schema`,
 * `subresources`, `additionalPrinterColumns` and `selectableFields` up to
 * spec level when every version has the same value (selectable fields only
 * along with the schema); the errors about them
 * then name `spec.validation.openAPIV3Schema`, `spec.subresources`, ... That
 * is what clients see, so the rules here follow the same placement.
 */
import { isPlainObject } from '../../machinery/object.js'
import type {
  CustomResourceColumnDefinition,
  CustomResourceDefinitionVersion,
  CustomResourceSubresources,
  SelectableField,
} from './types.js'

export type PerVersionField = 'schema' | 'subresources' | 'additionalPrinterColumns' | 'selectableFields'

const PER_VERSION_FIELDS: readonly PerVersionField[] = ['schema', 'subresources', 'additionalPrinterColumns', 'selectableFields']

/** Which per-version fields are the same in every version, and so are reported at spec level. */
export type Placement = Record<PerVersionField, boolean>

/**
 * Upstream's semantic equality of decoded values: absent, null and empty
 * lists are one value (Go's nil and empty slices compare equal there);
 * an empty object is a set struct, not an absent one.
 */
export function semanticEqual(a: unknown, b: unknown): boolean {
  const absent = (v: unknown) => v === undefined || v === null || (Array.isArray(v) && v.length === 0)
  if (absent(a) || absent(b)) return absent(a) && absent(b)
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false
    return a.every((v, i) => semanticEqual(v, b[i]))
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)])
    return [...keys].every((k) => semanticEqual(a[k], b[k]))
  }
  return a === b
}

export function placementOf(versions: readonly CustomResourceDefinitionVersion[]): Placement {
  const first = versions[0]
  const placement = {} as Placement
  for (const field of PER_VERSION_FIELDS) {
    placement[field] = first !== undefined && versions.every((v) => semanticEqual(v?.[field], first?.[field]))
  }
  // Selectable fields name paths of a schema: they move only together with it.
  placement.selectableFields &&= placement.schema
  return placement
}

/** A version as upstream's internal form holds it: the fields moved to spec level are gone. */
export interface InternalVersion {
  name: string
  served: boolean
  storage: boolean
  deprecated: boolean
  deprecationWarning?: string
  schema?: unknown
  subresources?: CustomResourceSubresources
  additionalPrinterColumns?: CustomResourceColumnDefinition[]
  selectableFields?: SelectableField[]
}

export function internalVersion(version: CustomResourceDefinitionVersion, placement: Placement): InternalVersion {
  const v = isPlainObject(version) ? version : ({} as CustomResourceDefinitionVersion)
  const out: InternalVersion = {
    name: typeof v.name === 'string' ? v.name : '',
    served: v.served === true,
    storage: v.storage === true,
    deprecated: v.deprecated === true,
  }
  if (typeof v.deprecationWarning === 'string') out.deprecationWarning = v.deprecationWarning
  if (!placement.schema && isSet(v.schema)) out.schema = v.schema
  if (!placement.subresources && isSet(v.subresources)) out.subresources = v.subresources
  if (!placement.additionalPrinterColumns && isSet(v.additionalPrinterColumns)) out.additionalPrinterColumns = v.additionalPrinterColumns
  if (!placement.selectableFields && isSet(v.selectableFields)) out.selectableFields = v.selectableFields
  return out
}

const isSet = (v: unknown): boolean => v !== undefined && v !== null
