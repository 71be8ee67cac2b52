/**
 * Server-side apply, free of HTTP and storage: field sets and their
 * FieldsV1 form, the fields an object sets, managedFields entries, the
 * ownership update every write records, and apply with conflicts.
 */
export { FieldSet, type FieldPrefix } from './fieldset.js'
export { FieldsV1ParseError, formatPath, type Json, type Path, type PathElement } from './path.js'
export { DEDUCED, fieldSetOf, shapeOfType, type Shape } from './typed.js'
export {
  decodeManagedFields,
  encodeManagedFields,
  sortManagedFields,
  ManagedFieldsDecodeError,
  type ManagedFieldsEntry,
} from './managed.js'
export { defaultResetFields, type ManagedFieldsOptions } from './options.js'
export { updateManagedFields, updateManagedFieldsInSteps } from './update.js'
export { applyObject, applyObjectInSteps, BEFORE_FIRST_APPLY, checkAppliedVersion, type ApplyOptions, type ApplyResult } from './apply.js'
export {
  ApplyConflictError,
  ApplyInvalidError,
  conflictCauses,
  conflictMessage,
  type ApplyConflict,
  type ConflictCause,
} from './conflict.js'
export { LAST_APPLIED_ANNOTATION } from './last-applied.js'
export { scaleManagedFields, type ScaleWrite } from './scale.js'
