/**
 * The `%#v` texts of the internal apiextensions values upstream shows in its
 * messages (`spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{...}`).
 * Go prints a set pointer as its address, which no client can rely on; a
 * fixed address stands in for it, as in the CEL rule messages.
 */
import { GoLiteral, goQuote, goStringSliceText } from '../../machinery/go-format.js'
import { isPlainObject } from '../../machinery/object.js'
import type { InternalVersion } from './layout.js'

const PKG = 'apiextensions'
const SET_POINTER = '0xc000000000'

const pointer = (type: string, set: boolean): string => `(*${type})(${set ? SET_POINTER : 'nil'})`

function columnText(value: unknown): string {
  const c = isPlainObject(value) ? value : {}
  const priority = typeof c['priority'] === 'number' ? c['priority'] : 0
  return (
    `${PKG}.CustomResourceColumnDefinition{Name:${goQuote(c['name'])}, Type:${goQuote(c['type'])}, ` +
    `Format:${goQuote(c['format'])}, Description:${goQuote(c['description'])}, Priority:${priority}, JSONPath:${goQuote(c['jsonPath'])}}`
  )
}

function sliceText(type: string, values: unknown, item: (v: unknown) => string): string {
  if (!Array.isArray(values) || values.length === 0) return `[]${type}(nil)`
  return `[]${type}{${values.map(item).join(', ')}}`
}

function versionText(v: InternalVersion): string {
  const columns = sliceText(`${PKG}.CustomResourceColumnDefinition`, v.additionalPrinterColumns, columnText)
  const selectable = sliceText(`${PKG}.SelectableField`, v.selectableFields, (f) => `${PKG}.SelectableField{JSONPath:${goQuote(isPlainObject(f) ? f['jsonPath'] : '')}}`)
  return (
    `${PKG}.CustomResourceDefinitionVersion{Name:${goQuote(v.name)}, Served:${v.served}, Storage:${v.storage}, ` +
    `Deprecated:${v.deprecated}, DeprecationWarning:${pointer('string', v.deprecationWarning !== undefined)}, ` +
    `Schema:${pointer(`${PKG}.CustomResourceValidation`, v.schema !== undefined)}, ` +
    `Subresources:${pointer(`${PKG}.CustomResourceSubresources`, v.subresources !== undefined)}, ` +
    `AdditionalPrinterColumns:${columns}, SelectableFields:${selectable}}`
  )
}

/** `%#v` of the internal versions list; `present` false for a CRD that sent none (the nil slice). */
export function goVersions(versions: readonly InternalVersion[], present: boolean): GoLiteral {
  const type = `[]${PKG}.CustomResourceDefinitionVersion`
  if (!present) return new GoLiteral(`${type}(nil)`)
  return new GoLiteral(`${type}{${versions.map(versionText).join(', ')}}`)
}

/** `%#v` of a []string; the nil slice when absent or empty, as a reset status holds it. */
export function goStringList(values: readonly string[] | undefined): GoLiteral {
  return new GoLiteral(values?.length ? goStringSliceText(values) : '[]string(nil)')
}

/** A JSONSchemaProps struct: far too large to print in full, so only its type shows. */
export const goSchemaProps = new GoLiteral(`${PKG}.JSONSchemaProps{...}`)
