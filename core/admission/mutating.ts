/**
 * The mutating half of admission as the registry runs it: every create and
 * update (subresources included) passes it once the request object is
 * decoded and defaulted and its managedFields are recorded, and before the
 * resource's strategy prepares and validates it. That is where upstream's
 * handlers call the mutating admission chain, and why what a plugin sets is
 * owned by no manager.
 */
import type { ResourceEntry } from '../resources/catalogue.js'
import type { KubeObject, UserInfo } from '../resources/object.js'

/** The operations a write admits (upstream's admission.Operation for writes). */
export type AdmissionOperation = 'CREATE' | 'UPDATE'

/** What a plugin sees of one write (upstream's admission.Attributes). */
export interface AdmissionAttributes {
  operation: AdmissionOperation
  /** The resource written to. */
  entry: ResourceEntry
  /** `status`, `scale`, ...; undefined for the resource itself. */
  subresource?: string
  namespace: string
  name: string
  /** The object about to be stored; plugins change it in place. */
  object: KubeObject
  /** The stored object an UPDATE replaces. */
  oldObject?: KubeObject
  dryRun: boolean
  user: UserInfo
  /** Warnings for the answer's `Warning` headers. */
  warnings: string[]
}

/** A mutating admission plugin, or a chain of them (upstream's admission.MutationInterface). */
export interface MutatingAdmission {
  /** The plugin's name, as `--enable-admission-plugins` spells it. */
  readonly name: string
  handles(operation: AdmissionOperation): boolean
  /** Changes `attributes.object`; throws a StatusError to refuse the write. */
  admit(attributes: AdmissionAttributes): void | Promise<void>
}

/** The plugins in order, each one that handles the operation seeing what the ones before it made. */
export function mutatingChain(name: string, plugins: readonly MutatingAdmission[]): MutatingAdmission {
  return {
    name,
    handles: (operation) => plugins.some((p) => p.handles(operation)),
    async admit(attributes) {
      for (const plugin of plugins) if (plugin.handles(attributes.operation)) await plugin.admit(attributes)
    },
  }
}
