/**
 * CertificateSubjectRestriction (upstream: plugin/pkg/admission/certificates/subjectrestriction):
 * a CertificateSigningRequest for the `kubernetes.io/kube-apiserver-client`
 * signer may not ask for the `system:masters` organization, the group that
 * passes every authorization check.
 */
import { base64Decode } from '../../machinery/base64.js'
import { pemDecodeAll } from '../../pki/pem.js'
import { loadX509 } from '../../pki/x509.js'
import { certificateSigningRequests } from '../../resources/groups/certificates.js'
import type { ValidatingAdmission } from '../validating.js'
import { signerNameOf } from './certificate-approval.js'
import { admissionForbidden, isResource } from './forbidden.js'
import { specOf } from './storage-classes.js'
import type { AdmissionPluginFactory } from '../plugins.js'

const API_SERVER_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client'
const MASTERS_GROUP = 'system:masters'

/** The organizations the request's subject names; throws with upstream's reason when it is not a PEM certificate request. */
async function requestedOrganizations(request: unknown): Promise<string[]> {
  const pem = typeof request === 'string' ? new TextDecoder().decode(base64Decode(request)) : ''
  const block = pemDecodeAll(pem)[0]
  if (!block || block.label !== 'CERTIFICATE REQUEST') throw new Error('PEM block type must be CERTIFICATE REQUEST')
  const x509 = await loadX509()
  const csr = new x509.Pkcs10CertificateRequest(block.der)
  return csr.subjectName.getField('O')
}

export const certificateSubjectRestriction: ValidatingAdmission = {
  name: 'CertificateSubjectRestriction',
  handles: (operation) => operation === 'CREATE',
  async validate(a) {
    // The resource first: reading `a.object` makes the validating phase's copy of the object.
    if (!isResource(a, certificateSigningRequests.group, certificateSigningRequests.resource) || !a.object) return
    if (signerNameOf(a.object) !== API_SERVER_CLIENT_SIGNER) return
    let organizations: string[]
    try {
      organizations = await requestedOrganizations(specOf(a.object)['request'])
    } catch (err) {
      throw admissionForbidden(a, `failed to parse CSR: ${err instanceof Error ? err.message : String(err)}`)
    }
    if (organizations.includes(MASTERS_GROUP)) throw admissionForbidden(a, `use of ${API_SERVER_CLIENT_SIGNER} signer with ${MASTERS_GROUP} group is not allowed`)
  },
}

export const certificateSubjectRestrictionFactory: AdmissionPluginFactory = () => certificateSubjectRestriction
