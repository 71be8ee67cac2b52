import type { UserInfo } from '../machinery/object.js'
import type { FieldValidation } from './field-validation.js'

/** What the registry knows about the request it serves. */
export interface RequestContext {
  user: UserInfo
  now: Date
  /** `dryRun=All`: run every step but the write. */
  dryRun: boolean
  /** `fieldValidation` of a client's write; unset (the server's own writes): Ignore. */
  fieldValidation?: FieldValidation
  /** What parsing the body found before any type was known (duplicate fields), for field validation. */
  bodyProblems?: string[]
  /** The manager the write is recorded under in managedFields; unset for the server's own writes. */
  fieldManager?: string
  /** The uid a PUT's object carries: the update goes ahead only on the object of that uid (a storage precondition upstream). */
  updatePreconditionUid?: string
  /**
   * Set while a patch (JSON, merge or strategic merge) writes: a patched
   * object its kind's decoder refuses is a 422 on the field `patch`, quoting
   * the patched object as JSON, or for a strategic merge the patch as Go
   * prints it (`sent`), as upstream's patch handler answers.
   */
  patch?: { strategic: false } | { strategic: true; sent: unknown }
  /** Set while a server-side apply writes: its merge records the managedFields itself. */
  apply?: { force: boolean }
  /**
   * Asked before a write that was authorized as a patch or an update creates
   * the object (an apply, or a PUT, of one that does not exist): throws 403
   * unless the caller may also `create` it, as upstream's patch and update
   * handlers ask their authorizer. Unset: the server's own writes, which need not ask.
   */
  authorizeCreate?: () => Promise<void>
  /**
   * false for the inner writes of a request already admitted as a whole (an eviction's update and
   * delete of the pod, as upstream's eviction calls its pod store without admission). @default true
   */
  admission?: false
  /** Warnings for the answer's `Warning` headers. */
  warnings?: string[]
  /** Admission's audit annotations (`<plugin key>: value`), for the request's audit event. */
  auditAnnotations?: Record<string, string>
}
