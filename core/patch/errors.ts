/**
 * What a strategic merge patch can fail with, worded as upstream's
 * strategicpatch and mergepatch packages word it, and of the kind that
 * decides how upstream's PATCH handler answers it: `BadRequest` 400 (the
 * malformed directives), `Unprocessable` its generic 422 (lists of lists),
 * `Invalid` 422 with causes (a merged object that does not fit its type),
 * and `Internal` 500 with no reason: every other failure is a plain error
 * there, which the handler passes on as it is.
 */
import { type FieldError, fieldPath, invalid, invalidError } from '../machinery/field.js'
import { goPrint, goString, goTypeOf } from '../machinery/go-format.js'

export type PatchErrorKind = 'BadRequest' | 'Unprocessable' | 'Invalid' | 'Internal'

export class PatchError extends Error {
  readonly kind: PatchErrorKind
  /**
   * Set when the patched object does not fit its type: upstream reports that
   * as a 422 Invalid with one cause on the field `patch`.
   */
  readonly causes: readonly FieldError[]

  constructor(kind: PatchErrorKind, message: string, causes: readonly FieldError[] = []) {
    super(message)
    this.name = 'PatchError'
    this.kind = kind
    this.causes = causes
  }
}

export const badPrimitiveListFormat = (): PatchError =>
  new PatchError('BadRequest', 'invalid patch format of primitive list')

export const badRetainKeysFormat = (): PatchError => new PatchError('BadRequest', 'invalid patch format of retainKeys')

export const badSetElementOrderFormat = (): PatchError =>
  new PatchError('BadRequest', 'invalid patch format of setElementOrder list')

export const listOfLists = (): PatchError => new PatchError('Unprocessable', 'lists of lists are not supported')

export const noMergeKey = (item: unknown, mergeKey: string): PatchError =>
  new PatchError('Internal', `map: ${goPrint(item)} does not contain declared merge key: ${mergeKey}`)

export const badArgType = (expected: 'map' | 'list', actual: unknown): PatchError =>
  new PatchError(
    'Internal',
    `expected a ${expected === 'map' ? 'map[string]interface {}' : '[]interface {}'}, but received a ${goTypeOf(actual)}`,
  )

export const badPatchType = (directive: unknown, map: unknown): PatchError =>
  new PatchError('Internal', `unknown patch type: ${goString(directive)} in map: ${goPrint(map)}`)

/** Any other failure to apply the patch, with upstream's text. */
export const cannotApply = (message: string): PatchError => new PatchError('Internal', message)

/** The merged object has a value of the wrong shape for its field (a list where a struct belongs, ...). */
export function doesNotFit(patch: unknown, detail: string): PatchError {
  const causes = [invalid(fieldPath('patch'), goPrint(patch), detail)]
  return new PatchError('Invalid', invalidError('', '', '', causes).message, causes)
}
