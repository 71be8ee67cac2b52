/**
 * CertificateApproval (upstream: plugin/pkg/admission/certificates/approval):
 * approving or denying a CertificateSigningRequest (its `approval`
 * subresource) needs the `approve` verb on the signer of the stored request
 * (`signers`, by name or `<domain>/*`), so that nobody approves for a signer
 * they were not given.
 */
import type { Authorizer } from '../../authz/authorizer.js'
import { certificateSigningRequests } from '../../resources/groups/certificates.js'
import type { ValidatingAdmission } from '../validating.js'
import { admissionForbidden, isResource } from './forbidden.js'
import { mayUseSigner } from './signer-authorization.js'
import { specOf } from './storage-classes.js'
import type { AdmissionPluginFactory } from '../plugins.js'

export const signerNameOf = (csr: Parameters<typeof specOf>[0]): string => {
  const name = specOf(csr)['signerName']
  return typeof name === 'string' ? name : ''
}

export function certificateApproval(authorizer: Authorizer): ValidatingAdmission {
  return {
    name: 'CertificateApproval',
    handles: (operation) => operation === 'UPDATE',
    async validate(a) {
      if (!isResource(a, certificateSigningRequests.group, certificateSigningRequests.resource, 'approval')) return
      // The stored signer: a request that also changes the signer is refused by validation anyway.
      const signerName = signerNameOf(a.oldObject)
      if (!(await mayUseSigner(authorizer, a.user, 'approve', signerName)))
        throw admissionForbidden(a, `user not permitted to approve requests with signerName ${JSON.stringify(signerName)}`)
    },
  }
}

export const certificateApprovalFactory: AdmissionPluginFactory = ({ authorizer }) => certificateApproval(authorizer)
