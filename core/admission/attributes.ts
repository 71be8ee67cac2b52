/**
 * What an admission plugin sees of one request (upstream's
 * admission.Attributes): the operation, the resource and subresource, the
 * object and the stored one it replaces or removes, the operation's
 * options, dry-run and the user.
 */
import type { ResourceEntry } from '../resources/catalogue.js'
import type { KubeObject, UserInfo } from '../machinery/object.js'

/** Upstream's admission.Operation. CONNECT is for the proxy-like subresources. */
export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT'

export interface AdmissionAttributes {
  operation: AdmissionOperation
  /** The resource written to. */
  entry: ResourceEntry
  /** `status`, `scale`, `eviction`, ...; undefined for the resource itself. */
  subresource?: string
  namespace: string
  name: string
  /**
   * The object about to be stored (for a subresource, the object the request sent: an Eviction,
   * a TokenReview); mutating plugins change it in place. Undefined for DELETE, as upstream.
   */
  object?: KubeObject
  /** The stored object an UPDATE replaces or a DELETE removes. */
  oldObject?: KubeObject
  /** The operation's options as the client sent them (CreateOptions, UpdateOptions, PatchOptions, DeleteOptions). */
  options?: Record<string, unknown>
  dryRun: boolean
  user: UserInfo
  /** Warnings for the answer's `Warning` headers. */
  warnings: string[]
  /** Annotations for the request's audit event; absent when the request is not audited. */
  auditAnnotations?: Record<string, string>
}
