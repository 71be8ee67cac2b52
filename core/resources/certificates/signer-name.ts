/**
 * A signer's name (upstream's ValidateSignerName): `<domain>/<path>`, the
 * domain a DNS name of at least two labels, the path dot-separated DNS
 * subdomains, at most 571 characters in all: room for
 * `<fqdn>/<namespace>.<name>` of a namespaced signer.
 */
import { type FieldError, type FieldPath, invalid, required, tooLong } from '../../machinery/field.js'
import { DNS1123_LABEL_MAX, DNS1123_SUBDOMAIN_MAX, isDNS1123Label, isDNS1123Subdomain } from '../../machinery/names.js'
import { appendAll } from '../../machinery/append-all.js'

const MAX_DOMAIN = DNS1123_SUBDOMAIN_MAX
const MAX_PATH = DNS1123_SUBDOMAIN_MAX + DNS1123_LABEL_MAX + 1
const MAX_SIGNER_NAME = MAX_DOMAIN + MAX_PATH + 1

/** Errors of the first label of `segment` that fails `check`; later labels would only repeat them. */
function firstBadLabel(path: FieldPath, segment: string, labels: string[], check: (label: string) => string[]): FieldError[] {
  for (const label of labels) {
    const msgs = check(label)
    if (msgs.length) return msgs.map((msg) => invalid(path, segment, `validating label ${JSON.stringify(label)}: ${msg}`))
  }
  return []
}

export function validateSignerName(path: FieldPath, signerName: string): FieldError[] {
  if (!signerName) return [required(path, 'signerName must be provided')]
  const segments = signerName.split('/')
  if (segments.length !== 2) return [invalid(path, signerName, "must be a fully qualified domain and path of the form 'example.com/signer-name'")]
  const [domain = '', signerPath = ''] = segments
  const errs: FieldError[] = []
  if (domain.length > MAX_DOMAIN) errs.push(tooLong(path, MAX_DOMAIN))
  const domainLabels = domain.split('.')
  appendAll(errs, firstBadLabel(path, domain, domainLabels, isDNS1123Label))
  if (domainLabels.length < 2) errs.push(invalid(path, domain, 'should be a domain with at least two segments separated by dots'))
  appendAll(errs, firstBadLabel(path, signerPath, signerPath.split('.'), isDNS1123Subdomain))
  if (signerName.length > MAX_SIGNER_NAME) errs.push(tooLong(path, MAX_SIGNER_NAME))
  return errs
}
