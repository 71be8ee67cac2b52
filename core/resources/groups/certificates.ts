/** certificates.k8s.io/v1: certificate signing requests. Approval and signing belong in its strategies. */
import { humanDuration } from '../../registry/human-duration.js'
import type { ResourceEntry } from '../catalogue.js'
import { ageColumn, column, nameColumn } from '../columns/common.js'
import { at, list, text, textAt } from '../columns/values.js'
import { defineResource, statusSubresource } from '../define.js'
import type { KubeObject } from '../object.js'
import { anyName } from '../names.js'

/** `Approved,Issued`, `Denied`, `Pending` ..., as upstream summarizes the conditions. */
function condition(csr: KubeObject): string {
  const types = new Set(list(at(csr, 'status', 'conditions')).map((c) => text(at(c, 'type'))))
  let status = types.has('Denied') ? 'Denied' : types.has('Approved') ? 'Approved' : 'Pending'
  if (types.has('Failed')) status += ',Failed'
  if (text(at(csr, 'status', 'certificate'))) status += ',Issued'
  return status
}

export const certificateSigningRequests: ResourceEntry = defineResource({
  group: 'certificates.k8s.io',
  version: 'v1',
  kind: 'CertificateSigningRequest',
  resource: 'certificatesigningrequests',
  namespaced: false,
  shortNames: ['csr'],
  subresources: [{ name: 'approval', kind: 'CertificateSigningRequest', verbs: ['get', 'patch', 'update'] }, statusSubresource('CertificateSigningRequest')],
  validateName: anyName,
  strategy: {
    fieldSet: (csr) => ({ 'spec.signerName': text(at(csr, 'spec', 'signerName')) }),
  },
  columns: [
    nameColumn,
    ageColumn,
    column('SignerName', 'Who is asked to sign.', (csr) => text(at(csr, 'spec', 'signerName')) || '<none>'),
    column('Requestor', 'Who asked.', textAt('spec', 'username')),
    column('RequestedDuration', 'How long the certificate should last.', (csr) => {
      const seconds = at(csr, 'spec', 'expirationSeconds')
      return typeof seconds === 'number' ? humanDuration(seconds * 1000) : '<none>'
    }),
    column('Condition', 'Whether it was approved, denied or issued.', condition),
  ],
})
