/**
 * ClusterTrustBundleAttest (upstream: plugin/pkg/admission/certificates/ctbattest):
 * creating or changing a ClusterTrustBundle that names a signer needs the
 * `attest` verb on that signer (`signers`, by name or `<domain>/*`); an
 * update that only touches what the garbage collector writes passes.
 *
 * Upstream checks only with the ClusterTrustBundle feature gate on, which is
 * off by default at v1.32 (the resource is alpha and not served here): the
 * server builds it with `enabled` false, so it admits everything.
 */
import type { Authorizer } from '../../authz/authorizer.js'
import { onlyGarbageCollectorFieldsChange } from '../../authz/rbac/escalation.js'
import type { ValidatingAdmission } from '../validating.js'
import { signerNameOf } from './certificate-approval.js'
import { admissionForbidden, isResource } from './forbidden.js'
import { mayUseSigner } from './signer-authorization.js'
import type { AdmissionPluginFactory } from '../plugins.js'

export function clusterTrustBundleAttest(authorizer: Authorizer, enabled: boolean): ValidatingAdmission {
  return {
    name: 'ClusterTrustBundleAttest',
    handles: (operation) => operation === 'CREATE' || operation === 'UPDATE',
    async validate(a) {
      if (!enabled || !isResource(a, 'certificates.k8s.io', 'clustertrustbundles', a.subresource ?? '') || !a.object) return
      const signerName = signerNameOf(a.object)
      if (!signerName) return
      if (a.operation === 'UPDATE' && a.oldObject && onlyGarbageCollectorFieldsChange(a.object, a.oldObject)) return
      if (!(await mayUseSigner(authorizer, a.user, 'attest', signerName)))
        throw admissionForbidden(a, `user not permitted to attest for signerName ${JSON.stringify(signerName)}`)
    },
  }
}

/** The ClusterTrustBundle gate's default at v1.32: off. */
export const clusterTrustBundleAttestFactory: AdmissionPluginFactory = ({ authorizer }) => clusterTrustBundleAttest(authorizer, false)
