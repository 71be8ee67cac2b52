/**
 * The validating half of admission (upstream's admission.ValidationInterface):
 * it sees the object once the resource's strategy has prepared and
 * validated it, right before the store writes (a DELETE: the stored object
 * before it goes), and may only refuse.
 */
import type { AdmissionAttributes, AdmissionOperation } from './attributes.js'

export interface ValidatingAdmission {
  /** The plugin's name, as `--enable-admission-plugins` spells it. */
  readonly name: string
  handles(operation: AdmissionOperation): boolean
  /** Throws a StatusError to refuse the request; must not change the attributes' objects. */
  validate(attributes: AdmissionAttributes): void | Promise<void>
}

/** The plugins in order; the first refusal ends the chain. */
export function validatingChain(name: string, plugins: readonly ValidatingAdmission[]): ValidatingAdmission {
  return {
    name,
    handles: (operation) => plugins.some((p) => p.handles(operation)),
    async validate(attributes) {
      for (const plugin of plugins) {
        if (!plugin.handles(attributes.operation)) continue
        // A plugin that answered synchronously costs no turn of the microtask queue.
        const pending = plugin.validate(attributes)
        if (pending) await pending
      }
    },
  }
}
