const DNS1035_LABEL_FMT = '[a-z]([-a-z0-9]*[a-z0-9])?'
const DNS1035_LABEL_RE = new RegExp(`^${DNS1035_LABEL_FMT}$`)
const DNS1035_LABEL_MAX = 63

/** A DNS-1035 label (a service's name): a DNS-1123 label that starts with a letter. */
export function isDNS1035Label(name: string): string[] {
  const errs: string[] = []
  if (name.length > DNS1035_LABEL_MAX) errs.push(`must be no more than ${DNS1035_LABEL_MAX} characters`)
  if (!DNS1035_LABEL_RE.test(name))
    errs.push(
      "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character " +
        `(e.g. 'my-name',  or 'abc-123', regex used for validation is '${DNS1035_LABEL_FMT}')`,
    )
  return errs
}

/**
 * Name and key syntaxes with upstream's messages
 * (`apimachinery/pkg/util/validation`). Each returns the problems found, empty when valid.
 */
import { type FieldError, type FieldPath, invalid, required } from './field.js'

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?'
const DNS1123_LABEL_RE = new RegExp(`^${DNS1123_LABEL_FMT}$`)
export const DNS1123_LABEL_MAX = 63

const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`
const DNS1123_SUBDOMAIN_RE = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`)
export const DNS1123_SUBDOMAIN_MAX = 253

const QUALIFIED_NAME_PART_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'
const QUALIFIED_NAME_PART_RE = new RegExp(`^${QUALIFIED_NAME_PART_FMT}$`)
const QUALIFIED_NAME_MAX = 63

const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_PART_FMT})?`
const LABEL_VALUE_RE = new RegExp(`^${LABEL_VALUE_FMT}$`)
const LABEL_VALUE_MAX = 63

const CONFIG_MAP_KEY_RE = /^[-._a-zA-Z0-9]+$/
const NO_ERRORS: string[] = Object.freeze([]) as unknown as string[]

function maxLenMessage(n: number): string {
  return `must be no more than ${n} characters`
}

function regexMessage(what: string, fmt: string, examples: string[]): string {
  // upstream's RegexError: each example is followed by ", " and the next is preceded by " or ",
  // hence the two spaces: "(e.g. 'a',  or 'b', regex used for validation is '...')"
  const ex = examples.map((e) => `'${e}', `).join(' or ')
  return `${what} (e.g. ${ex}regex used for validation is '${fmt}')`
}

export function isDNS1123Label(value: string): string[] {
  const errs: string[] = []
  if (value.length > DNS1123_LABEL_MAX) errs.push(maxLenMessage(DNS1123_LABEL_MAX))
  if (!DNS1123_LABEL_RE.test(value)) {
    errs.push(
      regexMessage(
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
        DNS1123_LABEL_FMT,
        ['my-name', '123-abc'],
      ),
    )
  }
  return errs
}

export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = []
  if (value.length > DNS1123_SUBDOMAIN_MAX) errs.push(maxLenMessage(DNS1123_SUBDOMAIN_MAX))
  if (!DNS1123_SUBDOMAIN_RE.test(value)) {
    errs.push(
      regexMessage(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        DNS1123_SUBDOMAIN_FMT,
        ['example.com'],
      ),
    )
  }
  return errs
}

/** A label or annotation key: optional DNS subdomain prefix, `/`, then a name part. */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = []
  const parts = value.split('/')
  let name: string
  if (parts.length === 1) {
    name = parts[0] ?? ''
  } else if (parts.length === 2) {
    const prefix = parts[0] ?? ''
    name = parts[1] ?? ''
    if (prefix.length === 0) errs.push('prefix part must be non-empty')
    else for (const msg of isDNS1123Subdomain(prefix)) errs.push(`prefix part ${msg}`)
  } else {
    return [
      `a qualified name ${regexMessage(
        "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        QUALIFIED_NAME_PART_FMT,
        ['MyName', 'my.name', '123-abc'],
      )} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ]
  }
  if (name.length === 0) errs.push('name part must be non-empty')
  else if (name.length > QUALIFIED_NAME_MAX) errs.push(`name part ${maxLenMessage(QUALIFIED_NAME_MAX)}`)
  // An empty name part fails the pattern too: upstream reports both.
  if (!QUALIFIED_NAME_PART_RE.test(name)) {
    errs.push(
      `name part ${regexMessage(
        "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        QUALIFIED_NAME_PART_FMT,
        ['MyName', 'my.name', '123-abc'],
      )}`,
    )
  }
  return errs
}

export function isValidLabelValue(value: string): string[] {
  const errs: string[] = []
  if (value.length > LABEL_VALUE_MAX) errs.push(maxLenMessage(LABEL_VALUE_MAX))
  if (!LABEL_VALUE_RE.test(value)) {
    errs.push(
      regexMessage(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        LABEL_VALUE_FMT,
        ['MyValue', 'my_value', '12345'],
      ),
    )
  }
  return errs
}

/** Keys of ConfigMap and Secret data. */
export function isConfigMapKey(value: string): string[] {
  // Most keys are fine: no array of messages for them (a ConfigMap may hold tens of thousands).
  if (value.length <= DNS1123_SUBDOMAIN_MAX && CONFIG_MAP_KEY_RE.test(value) && !value.startsWith('..') && value !== '.') return NO_ERRORS
  const errs: string[] = []
  if (value.length > DNS1123_SUBDOMAIN_MAX) errs.push(maxLenMessage(DNS1123_SUBDOMAIN_MAX))
  if (!CONFIG_MAP_KEY_RE.test(value)) {
    errs.push(
      regexMessage(
        "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
        '[-._a-zA-Z0-9]+',
        ['key.name', 'KEY_NAME', 'key-name'],
      ),
    )
  }
  if (value === '.') errs.push("must not be '.'")
  else if (value === '..') errs.push("must not be '..'")
  else if (value.startsWith('..')) errs.push("must not start with '..'")
  return errs
}

/** Names that end up as one path segment (upstream's path.IsValidPathSegmentName). */
export function isValidPathSegmentName(value: string): string[] {
  if (value === '.' || value === '..') return [`may not be '${value}'`]
  const errs: string[] = []
  for (const bad of ['/', '%']) if (value.includes(bad)) errs.push(`may not contain '${bad}'`)
  return errs
}

const HTTP_PATH_FMT = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+"
const HTTP_PATH_RE = new RegExp(`^${HTTP_PATH_FMT}$`)

/** upstream's IsDomainPrefixedPath: `<DNS subdomain>/<HTTP path>` (an ingress class controller, a claim key). */
export function domainPrefixedPathErrors(path: FieldPath, value: string): FieldError[] {
  if (!value) return [required(path)]
  const slash = value.indexOf('/')
  const host = slash >= 0 ? value.slice(0, slash) : ''
  const rest = slash >= 0 ? value.slice(slash + 1) : ''
  if (!host || !rest) return [invalid(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")')]
  const errs = isDNS1123Subdomain(host).map((msg) => invalid(path, host, msg))
  if (!HTTP_PATH_RE.test(rest)) errs.push(invalid(path, rest, `Invalid path (regex used for validation is '${HTTP_PATH_FMT}')`))
  return errs
}
