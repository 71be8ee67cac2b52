/**
 * Where a custom resource keeps its scale (its CRD's `subresources.scale`):
 * dotted field paths read and written as upstream's unstructured accessors
 * do (integers, a selector string, a value of another type refused), and
 * the checks upstream's strategy makes of those fields on every write.
 */
import { type FieldError, FieldPath, invalid } from '../machinery/field.js'
import { goPrint, goTypeName } from '../machinery/go-format.js'
import { isPlainObject, type KubeObject } from '../machinery/object.js'
import type { ScalePaths } from './catalogue.js'

/** A value at a scale path that is not of the type the path needs; the text is upstream's accessor error. */
export class ScalePathError extends Error {
  override readonly name = 'ScalePathError'
}

/** A scale path as a list of map keys: the leading dot dropped, split on dots (no array notation). */
const pathFields = (path: string): string[] => path.replace(/^\./, '').split('.')

const dotted = (fields: readonly string[]): string => `.${fields.join('.')}`

function accessorError(fields: readonly string[], value: unknown, expected: string): ScalePathError {
  return new ScalePathError(`${dotted(fields)} accessor error: ${goPrint(value)} is of the type ${goTypeName(value)}, expected ${expected}`)
}

/** The value under `fields`; a null on the way counts as absent, any other non-object is an error. */
function nestedField(obj: unknown, fields: readonly string[]): { found: boolean; value: unknown } {
  let value: unknown = obj
  for (let i = 0; i < fields.length; i++) {
    if (value === null || value === undefined) return { found: false, value: undefined }
    if (!isPlainObject(value)) throw accessorError(fields.slice(0, i + 1), value, 'map[string]interface{}')
    const key = fields[i] as string
    if (!Object.hasOwn(value, key)) return { found: false, value: undefined }
    value = value[key]
  }
  return { found: true, value }
}

/** An integer at `path` (upstream's NestedInt64), undefined when absent. */
export function nestedInteger(obj: unknown, path: string): number | undefined {
  const fields = pathFields(path)
  const { found, value } = nestedField(obj, fields)
  if (!found) return undefined
  if (typeof value !== 'number' || !Number.isInteger(value)) throw accessorError(fields, value, 'int64')
  return value
}

/** A string at `path` (upstream's NestedString), undefined when absent. */
export function nestedString(obj: unknown, path: string): string | undefined {
  const fields = pathFields(path)
  const { found, value } = nestedField(obj, fields)
  if (!found) return undefined
  if (typeof value !== 'string') throw accessorError(fields, value, 'string')
  return value
}

/** Sets `value` at `path`, making the objects on the way (upstream's SetNestedField). */
export function setNested(obj: Record<string, unknown>, path: string, value: unknown): void {
  const fields = pathFields(path)
  let m = obj
  for (let i = 0; i < fields.length - 1; i++) {
    const key = fields[i] as string
    const next = m[key]
    if (next === undefined || next === null) m[key] = {}
    else if (!isPlainObject(next))
      throw new ScalePathError(`value cannot be set because ${dotted(fields.slice(0, i + 1))} is not a map[string]interface{}`)
    m = m[key] as Record<string, unknown>
  }
  m[fields[fields.length - 1] as string] = value
}

/**
 * upstream's checks of a custom resource's scale fields, run by its strategy
 * on create and update (spec and status) and on a status update (status
 * only): each path holds an integer in [0, MaxInt32], the selector path a
 * string. The field path is the CRD's path as written (`.spec.replicas`).
 */
export function validateCustomResourceScale(obj: KubeObject, paths: ScalePaths, parts: 'all' | 'status' = 'all'): FieldError[] {
  const errors: FieldError[] = []
  const replicas = (path: string): void => {
    const at = FieldPath.root(path)
    let n: number | undefined
    try {
      n = nestedInteger(obj, path) ?? 0
    } catch (err) {
      if (!(err instanceof ScalePathError)) throw err
      errors.push(invalid(at, 0, err.message))
      return
    }
    if (n < 0) errors.push(invalid(at, n, 'should be a non-negative integer'))
    else if (n > 2147483647) errors.push(invalid(at, n, 'should be less than or equal to 2147483647'))
  }
  if (parts === 'all') replicas(paths.specReplicasPath)
  replicas(paths.statusReplicasPath)
  if (paths.labelSelectorPath !== undefined) {
    try {
      nestedString(obj, paths.labelSelectorPath)
    } catch (err) {
      if (!(err instanceof ScalePathError)) throw err
      errors.push(invalid(FieldPath.root(paths.labelSelectorPath), '', err.message))
    }
  }
  return errors
}
