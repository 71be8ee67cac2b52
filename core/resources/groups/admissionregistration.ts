/**
 * admissionregistration.k8s.io/v1: admission webhooks and CEL admission
 * policies with their bindings, all in the `api-extensions` category. Every
 * one of them is updated only with the resourceVersion it was read at, as
 * upstream's strategies ask (allowUnconditionalUpdate false).
 */
import { RESET_OBJECT_META_FOR_STATUS, type ResourceEntry } from '../catalogue.js'
import { ageColumn, column, nameColumn } from '../columns/common.js'
import { labelSelectorText } from '../columns/format.js'
import { at, list, text, textAt } from '../columns/values.js'
import { defineResource, statusSubresource } from '../define.js'
import type { KubeObject } from '../../machinery/object.js'
import {
  applyBindingDefaults,
  applyPolicyDefaults,
  preparePolicyForCreate,
  validateBinding,
  validateMutatingPolicy,
  validateValidatingPolicy,
} from '../admissionregistration/policies.js'
import {
  applyWebhookDefaultsInSteps,
  validateWebhookConfigurationInSteps,
  validateWebhookConfigurationUpdateInSteps,
  type WebhookKind,
} from '../admissionregistration/webhooks.js'

const GROUP = 'admissionregistration.k8s.io'
const CATEGORIES = ['api-extensions']

function countOf(field: string, description: string) {
  return column(field.charAt(0).toUpperCase() + field.slice(1), description, (obj: KubeObject) => list(at(obj, ...(field === 'webhooks' ? [field] : ['spec', field]))).length, {
    type: 'integer',
  })
}

function paramKind(policy: KubeObject): string {
  const kind = at(policy, 'spec', 'paramKind')
  return kind === undefined ? '<unset>' : `${text(at(kind, 'apiVersion'))}/${text(at(kind, 'kind'))}`
}

/** The parameter object of a binding: `ns/name`; a mutating binding writes a missing namespace as a star, or shows its selector. */
function paramRef(mutating: boolean): (binding: KubeObject) => string {
  return (binding) => {
    const ref = at(binding, 'spec', 'paramRef')
    if (ref === undefined) return '<unset>'
    const name = text(at(ref, 'name'))
    const namespace = text(at(ref, 'namespace'))
    if (!mutating) return namespace ? `${namespace}/${name}` : name
    if (name) return `${namespace || '*'}/${name}`
    return at(ref, 'selector') !== undefined ? labelSelectorText(at(ref, 'selector')) : '<unset>'
  }
}

function webhookConfiguration(kind: string, resource: string, webhooks: WebhookKind): ResourceEntry {
  return defineResource({
    group: GROUP,
    version: 'v1',
    kind,
    resource,
    namespaced: false,
    categories: CATEGORIES,
    // Upstream's strategy: 1 at creation, one more whenever the webhooks change.
    tracksGeneration: true,
    strategy: {
      allowUnconditionalUpdate: false,
      applyDefaults: (obj) => applyWebhookDefaultsInSteps(obj, webhooks),
      validate: (obj) => validateWebhookConfigurationInSteps(obj, webhooks),
      validateUpdate: (obj, old) => validateWebhookConfigurationUpdateInSteps(obj, old, webhooks),
    },
    columns: [nameColumn, countOf('webhooks', 'How many webhooks it registers.'), ageColumn],
  })
}

function policyBinding(kind: string, resource: string, mutating: boolean): ResourceEntry {
  return defineResource({
    group: GROUP,
    version: 'v1',
    kind,
    resource,
    namespaced: false,
    categories: CATEGORIES,
    // Upstream's strategy: 1 at creation, one more whenever the spec changes.
    tracksGeneration: true,
    strategy: {
      allowUnconditionalUpdate: false,
      applyDefaults: applyBindingDefaults,
      validate: (obj) => validateBinding(obj, !mutating),
      validateUpdate: (obj) => validateBinding(obj, !mutating),
    },
    columns: [
      nameColumn,
      column('PolicyName', 'The policy it binds.', textAt('spec', 'policyName')),
      column('ParamRef', 'The object holding its parameters.', paramRef(mutating)),
      ageColumn,
    ],
  })
}

export const mutatingWebhookConfigurations = webhookConfiguration('MutatingWebhookConfiguration', 'mutatingwebhookconfigurations', 'mutating')
export const validatingWebhookConfigurations = webhookConfiguration('ValidatingWebhookConfiguration', 'validatingwebhookconfigurations', 'validating')

export const validatingAdmissionPolicies: ResourceEntry = defineResource({
  group: GROUP,
  version: 'v1',
  kind: 'ValidatingAdmissionPolicy',
  resource: 'validatingadmissionpolicies',
  singular: 'validatingadmissionpolicy',
  namespaced: false,
  categories: CATEGORIES,
  tracksGeneration: true,
  // Its status strategy calls ResetObjectMetaForStatus.
  subresources: [statusSubresource('ValidatingAdmissionPolicy', RESET_OBJECT_META_FOR_STATUS)],
  strategy: {
    allowUnconditionalUpdate: false,
    applyDefaults: applyPolicyDefaults,
    prepareForCreate: preparePolicyForCreate,
    validate: (obj) => validateValidatingPolicy(obj),
    validateUpdate: (obj, old) => validateValidatingPolicy(obj, old),
  },
  columns: [nameColumn, countOf('validations', 'How many validation rules it has.'), column('ParamKind', 'The kind of its parameters.', paramKind), ageColumn],
})

export const mutatingAdmissionPolicies: ResourceEntry = defineResource({
  group: GROUP,
  version: 'v1',
  kind: 'MutatingAdmissionPolicy',
  resource: 'mutatingadmissionpolicies',
  singular: 'mutatingadmissionpolicy',
  namespaced: false,
  categories: CATEGORIES,
  tracksGeneration: true,
  strategy: {
    allowUnconditionalUpdate: false,
    applyDefaults: applyPolicyDefaults,
    validate: (obj) => validateMutatingPolicy(obj),
    validateUpdate: (obj, old) => validateMutatingPolicy(obj, old),
  },
  columns: [nameColumn, countOf('mutations', 'How many mutations it has.'), column('ParamKind', 'The kind of its parameters.', paramKind), ageColumn],
})

export const validatingAdmissionPolicyBindings = policyBinding('ValidatingAdmissionPolicyBinding', 'validatingadmissionpolicybindings', false)
export const mutatingAdmissionPolicyBindings = policyBinding('MutatingAdmissionPolicyBinding', 'mutatingadmissionpolicybindings', true)

export const admissionRegistrationEntries: ResourceEntry[] = [
  mutatingAdmissionPolicies,
  mutatingAdmissionPolicyBindings,
  mutatingWebhookConfigurations,
  validatingAdmissionPolicies,
  validatingAdmissionPolicyBindings,
  validatingWebhookConfigurations,
]
