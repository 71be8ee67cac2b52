/**
 * Where a webhook is called (upstream's ValidateWebhookURL and
 * ValidateWebhookService): exactly one of an https URL without user info,
 * query or fragment, and an in-cluster service with a port and a clean path.
 */
import { at, text } from '../columns/values.js'
import { type FieldError, type FieldPath, invalid, required } from '../../machinery/field.js'
import { isDNS1123Subdomain } from '../../machinery/names.js'
import { dns1035LabelName } from '../names.js'
import { appendAll } from '../../machinery/append-all.js'

const FORM = '; desired format: https://host[/path]'

interface UrlParts {
  scheme: string
  host: string
  user?: string
  query: string
  fragment: string
}

/**
 * Splits a URL the way Go's url.Parse reads it (RFC 3986): a missing scheme
 * or host is no parse error there, only an empty part, which the rules below
 * then name. The WHATWG parser would refuse those outright.
 */
function splitUrl(url: string): UrlParts {
  let rest = url
  let fragment = ''
  const hash = rest.indexOf('#')
  if (hash >= 0) {
    fragment = rest.slice(hash + 1)
    rest = rest.slice(0, hash)
  }
  let query = ''
  const question = rest.indexOf('?')
  if (question >= 0) {
    query = rest.slice(question + 1)
    rest = rest.slice(0, question)
  }
  let scheme = ''
  const schemeMatch = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(rest)
  if (schemeMatch) {
    scheme = (schemeMatch[1] ?? '').toLowerCase()
    rest = rest.slice(schemeMatch[0].length)
  }
  if (!rest.startsWith('//')) return { scheme, host: '', query, fragment }
  const authorityEnd = rest.indexOf('/', 2)
  let authority = authorityEnd >= 0 ? rest.slice(2, authorityEnd) : rest.slice(2)
  let user: string | undefined
  const at = authority.lastIndexOf('@')
  if (at >= 0) {
    user = authority.slice(0, at)
    authority = authority.slice(at + 1)
  }
  return { scheme, host: authority, user, query, fragment }
}

export function validateWebhookURL(url: string, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  const u = splitUrl(url)
  if (u.scheme !== 'https') errs.push(invalid(path, u.scheme, `'https' is the only allowed URL scheme${FORM}`))
  if (!u.host) errs.push(invalid(path, u.host, `host must be provided${FORM}`))
  if (u.user !== undefined) errs.push(invalid(path, u.user, 'user information is not permitted in the URL'))
  if (u.fragment) errs.push(invalid(path, u.fragment, 'fragments are not permitted in the URL'))
  if (u.query) errs.push(invalid(path, u.query, 'query parameters are not permitted in the URL'))
  return errs
}

function validateServicePath(value: string, path: FieldPath): FieldError[] {
  if (value === '/' || value === '') return []
  if (value === '//') return [invalid(path, value, 'segment[0] may not be empty')]
  const errs: FieldError[] = []
  if (!value.startsWith('/')) errs.push(invalid(path, value, "must start with a '/'"))
  let inner = value.slice(1)
  if (inner.endsWith('/')) inner = inner.slice(0, -1)
  inner.split('/').forEach((segment, i) => {
    if (!segment) {
      errs.push(invalid(path, value, `segment[${i}] may not be empty`))
      return
    }
    for (const msg of isDNS1123Subdomain(segment)) errs.push(invalid(path, value, `segment[${i}]: ${msg}`))
  })
  return errs
}

export function validateWebhookService(service: unknown, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  // upstream hands name and namespace to its checker in swapped order, so a
  // missing namespace is reported on `name` and a missing name on
  // `namespace`; the paths and texts here are the ones clients see there.
  if (!text(at(service, 'namespace'))) errs.push(required(path.child('name'), 'service name is required'))
  if (!text(at(service, 'name'))) errs.push(required(path.child('namespace'), 'service namespace is required'))
  const port = at(service, 'port')
  if (typeof port === 'number' && !(Number.isInteger(port) && port >= 1 && port <= 65535))
    errs.push(invalid(path.child('port'), port, 'port is not valid: must be between 1 and 65535, inclusive'))
  const servicePath = at(service, 'path')
  if (typeof servicePath === 'string') appendAll(errs, validateServicePath(servicePath, path.child('path')))
  return errs
}

/** Exactly one of `url` and `service`. */
export function validateClientConfig(config: unknown, path: FieldPath): FieldError[] {
  const url = at(config, 'url')
  const service = at(config, 'service')
  const hasUrl = typeof url === 'string'
  const hasService = service !== undefined && service !== null
  if (hasUrl === hasService) return [required(path, 'exactly one of url or service is required')]
  if (hasUrl) return validateWebhookURL(url, path.child('url'))
  return validateWebhookService(service, path.child('service'))
}

/** A service reference's port defaults to 443. */
export function defaultServicePort(config: unknown): void {
  const service = at(config, 'service')
  if (service !== null && typeof service === 'object') (service as Record<string, unknown>)['port'] ??= 443
}

/**
 * The items of a webhook's review versions (admission and conversion alike):
 * each a DNS-1035 label, none twice.
 */
export function validateReviewVersionItems(versions: readonly string[], path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  const seen = new Set<string>()
  versions.forEach((v, i) => {
    if (seen.has(v)) {
      errs.push(invalid(path.index(i), v, 'duplicate version'))
      return
    }
    seen.add(v)
    for (const msg of dns1035LabelName(v)) errs.push(invalid(path.index(i), v, msg))
  })
  return errs
}
