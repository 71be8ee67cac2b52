/**
 * CertificateSigning (upstream: plugin/pkg/admission/certificates/signing):
 * writing a CertificateSigningRequest's `status` so that its certificate or
 * its conditions change needs the `sign` verb on the stored request's signer
 * (`signers`, by name or `<domain>/*`).
 */
import { jsonEqual } from '../../apply/typed.js'
import type { Authorizer } from '../../authz/authorizer.js'
import { certificateSigningRequests } from '../../resources/groups/certificates.js'
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import type { ValidatingAdmission } from '../validating.js'
import { signerNameOf } from './certificate-approval.js'
import { admissionForbidden, isResource } from './forbidden.js'
import { mayUseSigner } from './signer-authorization.js'
import type { AdmissionPluginFactory } from '../plugins.js'

const statusField = (csr: KubeObject | undefined, field: string): unknown => {
  const status = csr?.['status']
  return isPlainObject(status) ? status[field] : undefined
}

/** Conditions compared as upstream's semantic equality: a missing list equals an empty one. */
const conditionsOf = (csr: KubeObject | undefined): unknown => {
  const conditions = statusField(csr, 'conditions')
  return Array.isArray(conditions) && conditions.length ? conditions : undefined
}

export function certificateSigning(authorizer: Authorizer): ValidatingAdmission {
  return {
    name: 'CertificateSigning',
    handles: (operation) => operation === 'UPDATE',
    async validate(a) {
      if (!isResource(a, certificateSigningRequests.group, certificateSigningRequests.resource, 'status')) return
      const [csr, old] = [a.object, a.oldObject]
      const certificateSame = (statusField(csr, 'certificate') ?? '') === (statusField(old, 'certificate') ?? '')
      if (certificateSame && jsonEqual(conditionsOf(csr) ?? [], conditionsOf(old) ?? [])) return
      const signerName = signerNameOf(old)
      if (!(await mayUseSigner(authorizer, a.user, 'sign', signerName)))
        throw admissionForbidden(a, `user not permitted to sign requests with signerName ${JSON.stringify(signerName)}`)
    },
  }
}

export const certificateSigningFactory: AdmissionPluginFactory = ({ authorizer }) => certificateSigning(authorizer)
