/**
 * Ingress and IngressClass rules (upstream's ValidateIngressSpec and
 * ValidateIngressClass): hosts are DNS names or `*.` wildcards, never IPs;
 * paths need a type and, for Exact and Prefix, a clean absolute path;
 * backends name a service port or a resource, not both.
 */
import { at, list, record, text } from '../columns/values.js'
import { portNameErrors } from '../core/pod-spec-containers.js'
import { dns1035LabelName } from '../names.js'
import type { KubeObject } from '../../machinery/object.js'
import { type FieldError, type FieldPath, fieldPath, forbiddenField, invalid, isSet, notSupported, required, tooLong } from '../../machinery/field.js'
import { GoLiteral } from '../../machinery/go-format.js'
import { domainPrefixedPathErrors, isDNS1123Label, isDNS1123Subdomain, isValidPathSegmentName } from '../../machinery/names.js'
import { IMMUTABLE, isIP } from './addresses.js'
import { appendAll } from '../../machinery/append-all.js'

const PATH_TYPES = ['Exact', 'ImplementationSpecific', 'Prefix']
const INVALID_PATH_SEQUENCES = ['//', '/./', '/../', '%2f', '%2F']
const INVALID_PATH_SUFFIXES = ['/..', '/.']
const INGRESS_CLASS_ANNOTATION = 'kubernetes.io/ingress.class'
const PARAMETER_SCOPES = ['Cluster', 'Namespace']
const MAX_CONTROLLER_LENGTH = 250

const WILDCARD_FMT = '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'
const WILDCARD_RE = new RegExp(`^${WILDCARD_FMT}$`)

/** upstream's IsWildcardDNS1123Subdomain: `*.` followed by a DNS subdomain. */
export function wildcardSubdomainErrors(host: string): string[] {
  const errs: string[] = []
  if (host.length > 253) errs.push('must be no more than 253 characters')
  if (!WILDCARD_RE.test(host)) {
    errs.push(
      "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character " +
        `(e.g. '*.example.com', regex used for validation is '${WILDCARD_FMT}')`,
    )
  }
  return errs
}

/** A host or TLS host: a wildcard when it has a star, a DNS subdomain otherwise. */
function hostErrors(host: string): string[] {
  return host.includes('*') ? wildcardSubdomainErrors(host) : isDNS1123Subdomain(host)
}

/** A typed reference to an object in the Ingress's namespace (resource backends). */
function validateTypedReference(ref: unknown, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  const group = at(ref, 'apiGroup')
  if (typeof group === 'string') for (const msg of isDNS1123Subdomain(group)) errs.push(invalid(path.child('apiGroup'), group, msg))
  for (const field of ['kind', 'name']) {
    const value = text(at(ref, field))
    if (!value) errs.push(required(path.child(field)))
    else for (const msg of isValidPathSegmentName(value)) errs.push(invalid(path.child(field), value, msg))
  }
  return errs
}

function validateBackend(backend: unknown, path: FieldPath): FieldError[] {
  const resource = at(backend, 'resource')
  const service = at(backend, 'service')
  if (isSet(resource) && isSet(service)) return [invalid(path, '', 'cannot set both resource and service backends')]
  if (isSet(resource)) return validateTypedReference(resource, path.child('resource'))
  if (!isSet(service)) return [invalid(path, '', 'resource or service backend is required')]
  const errs: FieldError[] = []
  const name = text(at(service, 'name'))
  const namePath = path.child('service').child('name')
  if (!name) errs.push(required(namePath))
  else for (const msg of dns1035LabelName(name)) errs.push(invalid(namePath, name, msg))
  const portName = text(at(service, 'port', 'name'))
  const portNumber = at(service, 'port', 'number')
  const hasNumber = typeof portNumber === 'number' && portNumber !== 0
  const portPath = path.child('service').child('port')
  if (portName && hasNumber) errs.push(invalid(path, '', 'cannot set both port name & port number'))
  else if (portName) for (const msg of portNameErrors(portName)) errs.push(invalid(portPath.child('name'), portName, msg))
  else if (hasNumber) {
    if (!Number.isInteger(portNumber) || portNumber < 1 || portNumber > 65535)
      errs.push(invalid(portPath.child('number'), portNumber, 'must be between 1 and 65535, inclusive'))
  } else errs.push(required(path, 'port name or number is required'))
  return errs
}

function validatePath(p: unknown, path: FieldPath): FieldError[] {
  const pathType = at(p, 'pathType')
  if (!isSet(pathType)) return [required(path.child('pathType'), 'pathType must be specified')]
  const errs: FieldError[] = []
  const value = text(at(p, 'path'))
  const valuePath = path.child('path')
  switch (pathType) {
    case 'Exact':
    case 'Prefix':
      if (!value.startsWith('/')) errs.push(invalid(valuePath, value, 'must be an absolute path'))
      for (const seq of INVALID_PATH_SEQUENCES) if (value.includes(seq)) errs.push(invalid(valuePath, value, `must not contain '${seq}'`))
      for (const suffix of INVALID_PATH_SUFFIXES) if (value.endsWith(suffix)) errs.push(invalid(valuePath, value, `cannot end with '${suffix}'`))
      break
    case 'ImplementationSpecific':
      if (value && !value.startsWith('/')) errs.push(invalid(valuePath, value, 'must be an absolute path'))
      break
    default:
      errs.push(notSupported(path.child('pathType'), pathType, PATH_TYPES))
  }
  appendAll(errs, validateBackend(at(p, 'backend'), path.child('backend')))
  return errs
}

function validateRule(rule: unknown, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  const host = text(at(rule, 'host'))
  if (host) {
    if (isIP(host)) errs.push(invalid(path.child('host'), host, 'must be a DNS name, not an IP address'))
    for (const msg of hostErrors(host)) errs.push(invalid(path.child('host'), host, msg))
  }
  const http = at(rule, 'http')
  if (isSet(http)) {
    const paths = list(at(http, 'paths'))
    const pathsPath = path.child('http').child('paths')
    if (paths.length === 0) errs.push(required(pathsPath))
    paths.forEach((p, i) => appendAll(errs, validatePath(p, pathsPath.index(i))))
  }
  return errs
}

function validateTLS(tls: unknown[], path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  tls.forEach((entry, i) => {
    list(at(entry, 'hosts')).forEach((raw, j) => {
      const host = text(raw)
      for (const msg of hostErrors(host)) errs.push(invalid(path.index(i).child('hosts').index(j), host, msg))
    })
    const secret = text(at(entry, 'secretName'))
    if (secret) for (const msg of isDNS1123Subdomain(secret)) errs.push(invalid(path.index(i).child('secretName'), secret, msg))
  })
  return errs
}

export function validateIngressSpec(obj: KubeObject): FieldError[] {
  const path = fieldPath('spec')
  const spec = record(obj['spec'])
  const rules = list(spec['rules'])
  const errs: FieldError[] = []
  if (rules.length === 0 && !isSet(spec['defaultBackend'])) {
    const shown = new GoLiteral(Array.isArray(spec['rules']) ? '[]networking.IngressRule{}' : '[]networking.IngressRule(nil)')
    errs.push(invalid(path, shown, 'either `defaultBackend` or `rules` must be specified'))
  }
  if (isSet(spec['defaultBackend'])) appendAll(errs, validateBackend(spec['defaultBackend'], path.child('defaultBackend')))
  rules.forEach((rule, i) => appendAll(errs, validateRule(rule, path.child('rules').index(i))))
  appendAll(errs, validateTLS(list(spec['tls']), path.child('tls')))
  const className = spec['ingressClassName']
  if (typeof className === 'string') for (const msg of isDNS1123Subdomain(className)) errs.push(invalid(path.child('ingressClassName'), className, msg))
  return errs
}

/** On create, the legacy class annotation and ingressClassName must agree when both are given. */
export function validateIngressCreate(obj: KubeObject): FieldError[] {
  const errs = validateIngressSpec(obj)
  const annotation = obj.metadata.annotations?.[INGRESS_CLASS_ANNOTATION]
  const className = at(obj, 'spec', 'ingressClassName')
  if (annotation !== undefined && typeof className === 'string' && annotation !== className) {
    errs.push(invalid(fieldPath('annotations').child(INGRESS_CLASS_ANNOTATION), annotation, 'must match `ingressClassName` when both are specified'))
  }
  return errs
}

/** An Ingress's status is written through its status subresource only. */
export function prepareIngressForCreate(obj: KubeObject): void {
  obj['status'] = { loadBalancer: {} }
}

/** An IngressClass's parameters with no scope are cluster-scoped. */
export function applyIngressClassDefaults(obj: KubeObject): void {
  const parameters = at(obj, 'spec', 'parameters')
  if (parameters !== null && typeof parameters === 'object') (parameters as Record<string, unknown>)['scope'] ??= 'Cluster'
}

function validateParameters(params: unknown, path: FieldPath): FieldError[] {
  if (!isSet(params)) return []
  const errs = validateTypedReference(params, path)
  const scope = at(params, 'scope')
  if (!isSet(scope)) {
    errs.push(required(path.child('scope')))
    return errs
  }
  const namespace = at(params, 'namespace')
  if (!PARAMETER_SCOPES.includes(text(scope))) errs.push(notSupported(path.child('scope'), scope, PARAMETER_SCOPES))
  else if (scope === 'Namespace') {
    if (!isSet(namespace)) errs.push(required(path.child('namespace'), "`parameters.scope` is set to 'Namespace'"))
    else for (const msg of isDNS1123Label(text(namespace))) errs.push(invalid(path.child('namespace'), namespace, msg))
  } else if (isSet(namespace)) {
    errs.push(forbiddenField(path.child('namespace'), "`parameters.scope` is set to 'Cluster'"))
  }
  return errs
}

export function validateIngressClass(obj: KubeObject): FieldError[] {
  const path = fieldPath('spec')
  const errs: FieldError[] = []
  const controller = text(at(obj, 'spec', 'controller'))
  if (controller.length > MAX_CONTROLLER_LENGTH) errs.push(tooLong(path.child('controller'), MAX_CONTROLLER_LENGTH))
  appendAll(errs, domainPrefixedPathErrors(path.child('controller'), controller))
  appendAll(errs, validateParameters(at(obj, 'spec', 'parameters'), path.child('parameters')))
  return errs
}

export function validateIngressClassUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  const controller = text(at(obj, 'spec', 'controller'))
  const immutable = controller === text(at(old, 'spec', 'controller')) ? [] : [invalid(fieldPath('spec').child('controller'), controller, IMMUTABLE)]
  return [...immutable, ...validateIngressClass(obj)]
}
