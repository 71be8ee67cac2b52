/**
 * NodeDeclaredFeatureValidator (upstream: plugin/pkg/admission/nodedeclaredfeatures,
 * new in v1.35): refuses a pod update that needs a node feature the pod's
 * node does not list in `status.declaredFeatures`.
 *
 * Upstream acts only with the NodeDeclaredFeatures feature gate on, which is
 * alpha and off by default (and the plugin does not exist at the v1.32 this
 * server reports); Node objects here have no declared features either. The
 * plugin is accepted by name and, as upstream with the gate off, admits everything.
 */
import type { ValidatingAdmission } from '../validating.js'
import type { AdmissionPluginFactory } from '../plugins.js'

export const nodeDeclaredFeatureValidator: ValidatingAdmission = {
  name: 'NodeDeclaredFeatureValidator',
  handles: () => false,
  validate() {},
}

export const nodeDeclaredFeatureValidatorFactory: AdmissionPluginFactory = () => nodeDeclaredFeatureValidator
