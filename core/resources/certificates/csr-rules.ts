/**
 * The rules of CertificateSigningRequests (upstream's
 * pkg/apis/certificates/validation): a real PKCS#10 request whose signature
 * verifies, known usages, a well-formed signer, a duration of at least ten
 * minutes; conditions that make sense together; and a certificate that is
 * PEM certificates. An update meets them all again, but tolerates what the
 * stored object already got wrong (data from older servers), and each way
 * in may change only its part: the main endpoint nothing of the request or
 * its status, `approval` the Approved and Denied conditions, `status` the
 * certificate once. No way in removes an Approved, Denied or Failed
 * condition.
 *
 * Any name goes (upstream does not care what requests are called).
 */
import { type FieldError, fieldPath, forbiddenField, duplicate, invalid, notSupported, required } from '../../machinery/field.js'
import type { KubeObject } from '../../machinery/object.js'
import { sameJson } from '../../machinery/same-json.js'
import { at, list, record, text } from '../columns/values.js'
import { certificateRequestProblem, issuedCertificateProblem } from './certificate-contents.js'
import { goBytes, jsonBytes } from './go-pem.js'
import { validateSignerName } from './signer-name.js'
import { appendAll } from '../../machinery/append-all.js'

const LEGACY_UNKNOWN_SIGNER = 'kubernetes.io/legacy-unknown'
const MIN_EXPIRATION_SECONDS = 600

/** The key usages a request may ask for, sorted as upstream lists them. */
const KNOWN_USAGES = [
  'signing',
  'digital signature',
  'content commitment',
  'key encipherment',
  'key agreement',
  'data encipherment',
  'cert sign',
  'crl sign',
  'encipher only',
  'decipher only',
  'any',
  'server auth',
  'client auth',
  'code signing',
  'email protection',
  's/mime',
  'ipsec end system',
  'ipsec tunnel',
  'ipsec user',
  'timestamping',
  'ocsp signing',
  'microsoft sgc',
  'netscape sgc',
].sort()

/** Conditions that, when present, can only be True. */
const TRUE_ONLY_CONDITIONS = new Set(['Approved', 'Denied', 'Failed'])
const TRUE_ONLY = ['True']
const ANY_STATUS = ['False', 'True', 'Unknown']

// --- what the asynchronous checks found --------------------------------------

interface ContentFindings {
  request: string | undefined
  certificate: string | undefined
}

/** Per object validated, what prepareCsrValidation found in its PEM, with the field texts it read. */
const findings = new WeakMap<KubeObject, { requestText: unknown; certificateText: unknown; found: ContentFindings }>()

const requestOf = (csr: KubeObject): unknown => at(csr, 'spec', 'request')
const certificateOf = (csr: KubeObject): unknown => at(csr, 'status', 'certificate')

async function inspect(csr: KubeObject): Promise<void> {
  const requestText = requestOf(csr)
  const certificateText = certificateOf(csr)
  const found = {
    request: await certificateRequestProblem(jsonBytes(requestText)),
    certificate: await issuedCertificateProblem(jsonBytes(certificateText)),
  }
  findings.set(csr, { requestText, certificateText, found })
}

/** The strategy's prepareValidation: parses the request (its signature checked) and the certificate of the object and of the stored one. */
export async function prepareCsrValidation(csr: KubeObject, old?: KubeObject): Promise<void> {
  await inspect(csr)
  if (old) await inspect(old)
}

/**
 * What the PEM of `csr` holds that is wrong. Without prepareCsrValidation
 * before (never so in the registry), nothing is known to be wrong.
 */
function contentProblems(csr: KubeObject): ContentFindings {
  const known = findings.get(csr)
  if (known && known.requestText === requestOf(csr) && known.certificateText === certificateOf(csr)) return known.found
  return { request: undefined, certificate: undefined }
}

// --- the rules ---------------------------------------------------------------

interface Allowances {
  /** Through `approval`: Approved and Denied conditions may come and change. */
  settingApprovalConditions?: boolean
  /** Through `status`: the certificate may be set. */
  settingCertificate?: boolean
  // What the stored object already has wrong, tolerated again.
  bothApprovedAndDenied?: boolean
  legacySignerName?: boolean
  duplicateConditionTypes?: boolean
  emptyConditionType?: boolean
  arbitraryCertificate?: boolean
  unknownUsages?: boolean
  duplicateUsages?: boolean
}

type Condition = Record<string, unknown>

const conditionsOf = (csr: KubeObject): Condition[] => list(at(csr, 'status', 'conditions')).map(record)
const usagesOf = (csr: KubeObject): unknown[] => list(at(csr, 'spec', 'usages'))
const hasDuplicates = (values: unknown[]): boolean => new Set(values.map(String)).size !== values.length

/** What an update tolerates because the stored object has it already. */
function allowancesFrom(csr: KubeObject, old: KubeObject): Allowances {
  const oldTypes = conditionsOf(old).map((c) => text(c['type']))
  return {
    bothApprovedAndDenied: oldTypes.includes('Approved') && oldTypes.includes('Denied'),
    legacySignerName: text(at(old, 'spec', 'signerName')) === LEGACY_UNKNOWN_SIGNER,
    duplicateConditionTypes: hasDuplicates(oldTypes),
    emptyConditionType: oldTypes.includes(''),
    // An update that leaves the certificate alone, or one whose stored certificate was never valid.
    arbitraryCertificate: certificateOf(csr) === certificateOf(old) || contentProblems(old).certificate !== undefined,
    unknownUsages: usagesOf(old).some((u) => !KNOWN_USAGES.includes(text(u))),
    duplicateUsages: hasDuplicates(usagesOf(old)),
  }
}

function validateConditions(csr: KubeObject, allow: Allowances): FieldError[] {
  const errs: FieldError[] = []
  const path = fieldPath('status').child('conditions')
  const seen = new Set<string>()
  let approved = false
  let denied = false
  conditionsOf(csr).forEach((c, i) => {
    const type = text(c['type'])
    const status = text(c['status'])
    if (!allow.emptyConditionType && !type) errs.push(required(path.index(i).child('type')))
    const allowed = TRUE_ONLY_CONDITIONS.has(type) ? TRUE_ONLY : ANY_STATUS
    if (!status) errs.push(required(path.index(i).child('status')))
    else if (!allowed.includes(status)) errs.push(notSupported(path.index(i).child('status'), status, allowed))
    if (!allow.bothApprovedAndDenied && (type === 'Approved' || type === 'Denied')) {
      if ((type === 'Approved' && denied) || (type === 'Denied' && approved))
        errs.push(invalid(path.index(i).child('type'), type, 'Approved and Denied conditions are mutually exclusive'))
      if (type === 'Approved') approved = true
      else denied = true
    }
    if (!allow.duplicateConditionTypes) {
      if (seen.has(type)) errs.push(duplicate(path.index(i).child('type'), type))
      seen.add(type)
    }
  })
  return errs
}

function validateCsr(csr: KubeObject, allow: Allowances): FieldError[] {
  const errs: FieldError[] = []
  const spec = fieldPath('spec')
  const problems = contentProblems(csr)
  if (problems.request !== undefined) errs.push(invalid(spec.child('request'), goBytes(jsonBytes(requestOf(csr))), problems.request))
  const usages = usagesOf(csr)
  if (usages.length === 0) errs.push(required(spec.child('usages'), 'usages must be provided'))
  if (!allow.unknownUsages)
    usages.forEach((u, i) => {
      if (!KNOWN_USAGES.includes(text(u))) errs.push(notSupported(spec.child('usages').index(i), text(u), KNOWN_USAGES))
    })
  if (!allow.duplicateUsages) {
    const seen = new Set<string>()
    usages.forEach((u, i) => {
      if (seen.has(text(u))) errs.push(duplicate(spec.child('usages').index(i), text(u)))
      seen.add(text(u))
    })
  }
  const signerName = text(at(csr, 'spec', 'signerName'))
  if (!allow.legacySignerName && signerName === LEGACY_UNKNOWN_SIGNER)
    errs.push(invalid(spec.child('signerName'), signerName, 'the legacy signerName is not allowed via this API version'))
  else appendAll(errs, validateSignerName(spec.child('signerName'), signerName))
  const expiration = at(csr, 'spec', 'expirationSeconds')
  if (typeof expiration === 'number' && expiration < MIN_EXPIRATION_SECONDS)
    errs.push(invalid(spec.child('expirationSeconds'), expiration, 'may not specify a duration less than 600 seconds (10 minutes)'))
  appendAll(errs, validateConditions(csr, allow))
  if (!allow.arbitraryCertificate && problems.certificate !== undefined)
    errs.push(invalid(fieldPath('status').child('certificate'), '<certificate data>', problems.certificate))
  return errs
}

export function validateCsrCreate(csr: KubeObject): FieldError[] {
  return validateCsr(csr, {})
}

const ofType = (csr: KubeObject, type: string): Condition[] => conditionsOf(csr).filter((c) => text(c['type']) === type)

/** The two lists of conditions of one type, one line each, for a message that says what changed. */
function conditionChange(before: Condition[], after: Condition[]): string {
  return [...before.map((c) => `- ${JSON.stringify(c)}`), ...after.map((c) => `+ ${JSON.stringify(c)}`)].join('\n')
}

function validateCsrChange(csr: KubeObject, old: KubeObject, allow: Allowances): FieldError[] {
  const errs = validateCsr(csr, allow)
  const conditions = fieldPath('status').child('conditions')
  for (const type of ['Approved', 'Denied', 'Failed'])
    if (ofType(csr, type).length < ofType(old, type).length)
      errs.push(forbiddenField(conditions, `updates may not remove a condition of type ${JSON.stringify(type)}`))
  if (!allow.settingApprovalConditions)
    for (const type of ['Approved', 'Denied']) {
      const before = ofType(old, type)
      const after = ofType(csr, type)
      if (after.length > before.length) errs.push(forbiddenField(conditions, `updates may not add a condition of type ${JSON.stringify(type)}`))
      else if (after.length === before.length && !sameJson(before, after))
        errs.push(forbiddenField(conditions, `updates may not modify a condition of type ${JSON.stringify(type)}\n${conditionChange(before, after)}`))
    }
  if (text(certificateOf(csr)) !== text(certificateOf(old))) {
    const certificate = fieldPath('status').child('certificate')
    if (!allow.settingCertificate) errs.push(forbiddenField(certificate, 'updates may not set certificate content'))
    else if (text(certificateOf(old))) errs.push(forbiddenField(certificate, 'updates may not modify existing certificate content'))
  }
  return errs
}

/** An update through the main endpoint (its spec and status are the stored ones by then). */
export function validateCsrUpdate(csr: KubeObject, old: KubeObject): FieldError[] {
  return validateCsrChange(csr, old, allowancesFrom(csr, old))
}

/** An update through `status`: the signer's way to issue the certificate. */
export function validateCsrStatusUpdate(csr: KubeObject, old: KubeObject): FieldError[] {
  return validateCsrChange(csr, old, { ...allowancesFrom(csr, old), settingCertificate: true })
}

/** An update through `approval`: the approver's way to approve or deny. */
export function validateCsrApprovalUpdate(csr: KubeObject, old: KubeObject): FieldError[] {
  return validateCsrChange(csr, old, { ...allowancesFrom(csr, old), settingApprovalConditions: true })
}
