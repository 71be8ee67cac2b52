/**
 * certificates.k8s.io/v1: certificate signing requests. The requester is
 * recorded from who asks; approving goes through the `approval` subresource
 * (its conditions alone), issuing through `status`. Their rules are in
 * certificates/.
 */
import { fieldLabelNotSupported } from '../field-labels.js'
import { humanDuration } from '../../machinery/human-duration.js'
import type { ResourceEntry } from '../catalogue.js'
import { ageColumn, column, nameColumn } from '../columns/common.js'
import { at, list, text, textAt } from '../columns/values.js'
import { defineResource, statusSubresource } from '../define.js'
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import { anyName } from '../names.js'
import {
  prepareCsrValidation,
  validateCsrApprovalUpdate,
  validateCsrCreate,
  validateCsrStatusUpdate,
  validateCsrUpdate,
} from '../certificates/csr-rules.js'

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
  subresources: [
    { name: 'approval', kind: 'CertificateSigningRequest', verbs: ['get', 'patch', 'update'], validateUpdate: validateCsrApprovalUpdate },
    { ...statusSubresource('CertificateSigningRequest'), validateUpdate: validateCsrStatusUpdate },
  ],
  validateName: anyName,
  strategy: {
    fieldLabelRefusal: fieldLabelNotSupported,
    fieldSet: (csr) => ({ 'spec.signerName': text(at(csr, 'spec', 'signerName')) }),
    // Who asks is the requester, never what the body claims; a new request has no status (upstream's csrStrategy).
    prepareForCreate(csr, { user }) {
      const spec = (isPlainObject(csr['spec']) ? csr['spec'] : (csr['spec'] = {})) as Record<string, unknown>
      delete spec['username']
      delete spec['uid']
      delete spec['groups']
      delete spec['extra']
      if (user.username) spec['username'] = user.username
      if (user.uid) spec['uid'] = user.uid
      if (user.groups.length) spec['groups'] = [...user.groups]
      if (user.extra && Object.keys(user.extra).length) spec['extra'] = structuredClone(user.extra)
      delete csr['status']
    },
    // The request itself never changes after creation: only its metadata may.
    prepareForUpdate(csr, old) {
      csr['spec'] = structuredClone(old['spec'])
    },
    // The request's signature is checked with Web Crypto, ahead of the rules that report it.
    prepareValidation: prepareCsrValidation,
    validate: validateCsrCreate,
    validateUpdate: validateCsrUpdate,
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
