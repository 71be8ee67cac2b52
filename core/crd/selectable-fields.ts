/**
 * A custom resource's selectable fields (a CRD version's `selectableFields`),
 * the field-selector labels it answers beyond metadata.name and
 * metadata.namespace, as upstream's custom resource strategy computes them:
 * the label is the path without its leading dot (`spec.color`), the value
 * the path's result printed as Go prints it (strings as they are, integers
 * in decimal, `true`/`false`), an empty string when the path finds nothing.
 *
 * Every label is present for every object, so the registry, which learns
 * the supported labels from an empty object's field set, accepts them all
 * and refuses any other with `field label not supported`.
 */
import type { SelectableField } from '../resources/apiextensions/types.js'
import type { KubeObject } from '../machinery/object.js'
import { goPrint } from '../machinery/go-format.js'
import { compileJsonPath, type JsonPath, JsonPathError } from './jsonpath.js'

interface CompiledField {
  label: string
  path: JsonPath | undefined
}

/** The first result of the path, or undefined for none (or a path that cannot be evaluated). */
function firstResult(path: JsonPath, obj: KubeObject): unknown {
  try {
    return path.find(obj)[0]?.[0]
  } catch (err) {
    if (err instanceof JsonPathError) return undefined
    throw err
  }
}

export function selectableFieldSet(fields: SelectableField[] | undefined): (obj: KubeObject) => Record<string, string> {
  const compiled: CompiledField[] = (fields ?? []).map((f) => {
    const path = compileJsonPath(`{${f.jsonPath}}`, { allowMissingKeys: true })
    // CRD validation admits only simple paths; one that still does not parse selects the empty value.
    return { label: f.jsonPath.replace(/^\./, ''), path: typeof path === 'string' ? undefined : path }
  })
  return (obj) => {
    const set: Record<string, string> = {}
    for (const { label, path } of compiled) {
      const value = path ? firstResult(path, obj) : undefined
      set[label] = value === undefined || value === null ? '' : goPrint(value)
    }
    return set
  }
}
