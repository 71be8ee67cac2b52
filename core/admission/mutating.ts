/**
 * The mutating half of admission as the registry runs it: every create and
 * update (subresources included) passes it once the request object is
 * decoded and defaulted and its managedFields are recorded, and before the
 * resource's strategy prepares and validates it; a delete passes it with
 * no object, before the stored one is read. That is where upstream's
 * handlers call the mutating admission chain, and why what a plugin sets is
 * owned by no manager.
 */
import type { AdmissionAttributes, AdmissionOperation } from './attributes.js'

export type { AdmissionAttributes, AdmissionOperation } from './attributes.js'

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
      for (const plugin of plugins) {
        if (!plugin.handles(attributes.operation)) continue
        // A plugin that answered synchronously costs no turn of the microtask queue.
        const pending = plugin.admit(attributes)
        if (pending) await pending
      }
    },
  }
}
