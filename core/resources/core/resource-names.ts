/**
 * Resource names (the keys of a ResourceList) as upstream's core validation
 * checks them (validateResourceName, validateContainerResourceName and the
 * helpers they rely on): qualified names, and from the standard set unless
 * they carry a domain prefix.
 */
import { type FieldError, type FieldPath, invalid } from '../../machinery/field.js'
import { isQualifiedName } from '../../machinery/names.js'

const STANDARD_RESOURCES = new Set([
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
  'pods',
  'resourcequotas',
  'services',
  'replicationcontrollers',
  'secrets',
  'configmaps',
  'persistentvolumeclaims',
  'storage',
  'requests.storage',
  'services.nodeports',
  'services.loadbalancers',
])

const STANDARD_CONTAINER_RESOURCES = new Set(['cpu', 'memory', 'ephemeral-storage'])

const isHugePages = (name: string): boolean => name.startsWith('hugepages-')

/** In the kubernetes.io namespace: unprefixed, or prefixed with a kubernetes.io domain. */
export const isNativeResource = (name: string): boolean => !name.includes('/') || name.includes('kubernetes.io/')

/** A vendor's resource (`example.com/gpu`): outside kubernetes.io, and a qualified name once quota prefixes it. */
export function isExtendedResource(name: string): boolean {
  if (isNativeResource(name) || name.startsWith('requests.')) return false
  return isQualifiedName(`requests.${name}`).length === 0
}

/** Counts of objects, which only whole numbers measure (upstream's integerResources). */
const INTEGER_RESOURCES = new Set([
  'pods',
  'resourcequotas',
  'services',
  'replicationcontrollers',
  'secrets',
  'configmaps',
  'persistentvolumeclaims',
  'services.nodeports',
  'services.loadbalancers',
])

/** Upstream's IsIntegerResourceName: an object count or a vendor's resource. */
export const isIntegerResourceName = (name: string): boolean => INTEGER_RESOURCES.has(name) || isExtendedResource(name)

/** Resources that may not be overcommitted (a request must equal its limit): extended ones and huge pages. */
export const isOvercommitAllowed = (name: string): boolean => isNativeResource(name) && !isHugePages(name)

/** Upstream's validateResourceName. */
export function validateResourceName(name: string, path: FieldPath): FieldError[] {
  const errs = isQualifiedName(name).map((msg) => invalid(path, name, msg))
  if (errs.length) return errs
  const standard = STANDARD_RESOURCES.has(name) || isHugePages(name) || name.startsWith('requests.hugepages-')
  if (!name.includes('/') && !standard) return [invalid(path, name, 'must be a standard resource type or fully qualified')]
  return []
}

/** Upstream's validateContainerResourceName: the errors above, then the container-specific one. */
export function validateContainerResourceName(name: string, path: FieldPath): FieldError[] {
  const errs = validateResourceName(name, path)
  if (!name.includes('/')) {
    if (!STANDARD_CONTAINER_RESOURCES.has(name) && !isHugePages(name)) errs.push(invalid(path, name, 'must be a standard resource for containers'))
  } else if (!isNativeResource(name) && !isExtendedResource(name)) {
    errs.push(invalid(path, name, "doesn't follow extended resource name standard"))
  }
  return errs
}
