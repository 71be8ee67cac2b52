/**
 * The two policy plugins as the server builds them: each follows its
 * policies and bindings (and the namespaces and parameter objects they
 * need) through watch-fed indexes, and is ready once they are listed.
 */
import { mutatingAdmissionPolicies, mutatingAdmissionPolicyBindings, validatingAdmissionPolicies, validatingAdmissionPolicyBindings } from '../../resources/groups/admissionregistration.js'
import type { AdmissionPluginContext, AdmissionPluginInstance } from '../plugins.js'
import { PolicySource } from './source.js'
import { startTypeChecking } from './type-checking.js'
import { validatingPolicyAdmission } from './validating.js'
import { mutatingPolicyAdmission } from './mutating.js'

export function validatingAdmissionPolicyPlugin(context: AdmissionPluginContext): AdmissionPluginInstance {
  const typeChecking = startTypeChecking(context.catalogue, context.stored, context.logger, context.now)
  const source = new PolicySource(context.informers, context.catalogue, validatingAdmissionPolicies, validatingAdmissionPolicyBindings, typeChecking.policiesChanged)
  return {
    plugin: validatingPolicyAdmission({ source, authorizer: context.authorizer }),
    ready: source.ready,
    stop: () => {
      source.stop()
      typeChecking.stop()
    },
  }
}

/** Inert without its feature gate, as upstream's plugin is at 1.32: it neither watches nor mutates. */
export function mutatingAdmissionPolicyPlugin(context: AdmissionPluginContext): AdmissionPluginInstance {
  if (!context.options.admission?.mutatingAdmissionPolicy) return { plugin: { name: 'MutatingAdmissionPolicy', handles: () => false, admit: () => {} } }
  const source = new PolicySource(context.informers, context.catalogue, mutatingAdmissionPolicies, mutatingAdmissionPolicyBindings)
  return { plugin: mutatingPolicyAdmission({ source, authorizer: context.authorizer }), ready: source.ready, stop: () => source.stop() }
}
