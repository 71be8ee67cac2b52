/**
 * The rules of APIServices (upstream's kube-aggregator apiregistration
 * validation): an APIService is named after what it serves,
 * `<version>.<group>`; its priorities stay within their ranges; a local
 * one (no service) has no TLS settings, and a proxied one names a service
 * and a port. Through `status` only the conditions are checked.
 */
import { base64Decode } from '../../machinery/base64.js'
import { type FieldError, fieldPath, invalid, notSupported, required } from '../../machinery/field.js'
import { isDNS1035Label, isDNS1123Subdomain, isValidPathSegmentName } from '../../machinery/names.js'
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import { at, list, record, text } from '../columns/values.js'

const MAX_GROUP_PRIORITY = 20000
const MAX_VERSION_PRIORITY = 1000
const DEFAULT_SERVICE_PORT = 443
const CONDITION_STATUSES = ['True', 'False', 'Unknown']

const spec = (apiService: KubeObject): Record<string, unknown> => record(apiService['spec'])
const int32 = (v: unknown): number => (typeof v === 'number' ? v : 0)

/** apiregistration/v1 defaults: a service reference without a port means 443. */
/** The Available condition of an APIService its own server serves (no service to reach). */
export const LOCAL_AVAILABLE = { status: 'True', reason: 'Local', message: 'Local APIServices are always available' } as const

/**
 * Upstream's create: a client's status is not kept, and a local APIService
 * is Available from the start, so that `kubectl get apiservices` shows it so
 * at once rather than after the aggregator's next pass.
 */
export function prepareApiServiceForCreate(apiService: KubeObject, now: Date): void {
  if (isPlainObject(at(apiService, 'spec', 'service'))) {
    apiService['status'] = {}
    return
  }
  const lastTransitionTime = now.toISOString().replace(/\.\d{3}Z$/, 'Z')
  apiService['status'] = { conditions: [{ type: 'Available', ...LOCAL_AVAILABLE, lastTransitionTime }] }
}

export function applyApiServiceDefaults(apiService: KubeObject): void {
  const service = spec(apiService)['service']
  if (isPlainObject(service) && (service['port'] === undefined || service['port'] === null)) service['port'] = DEFAULT_SERVICE_PORT
}

/**
 * The name rule upstream gives the object's metadata check: a path segment
 * first (reported by the generic metadata rules here), then exactly
 * `<version>.<group>`. A generateName meets the same rule, unmasked.
 */
function nameErrors(apiService: KubeObject): FieldError[] {
  const s = spec(apiService)
  const requiredName = `${text(s['version'])}.${text(s['group'])}`
  const mismatch = (name: string) =>
    isValidPathSegmentName(name).length === 0 && name !== requiredName ? [`must be \`spec.version+"."+spec.group\`: ${JSON.stringify(requiredName)}`] : []
  const errs: FieldError[] = []
  const { name, generateName } = apiService.metadata
  if (generateName) for (const msg of mismatch(generateName)) errs.push(invalid(fieldPath('metadata').child('generateName'), generateName, msg))
  if (name) for (const msg of mismatch(name)) errs.push(invalid(fieldPath('metadata').child('name'), name, msg))
  return errs
}

/** How many bytes a base64 field holds (its text's length when it is not base64, which the decoder refuses anyway). */
function byteLength(v: unknown): number {
  if (typeof v !== 'string') return 0
  try {
    return base64Decode(v).length
  } catch {
    return v.length
  }
}

export function validateApiService(apiService: KubeObject): FieldError[] {
  const errs = nameErrors(apiService)
  const s = spec(apiService)
  const path = fieldPath('spec')
  const group = text(s['group'])
  const version = text(s['version'])
  // The legacy core group is the one APIService without a group.
  if (!group && version !== 'v1') errs.push(required(path.child('group'), 'only v1 may have an empty group and it better be legacy kube'))
  if (group) for (const msg of isDNS1123Subdomain(group)) errs.push(invalid(path.child('group'), group, msg))
  for (const msg of isDNS1035Label(version)) errs.push(invalid(path.child('version'), version, msg))
  const groupPriority = int32(s['groupPriorityMinimum'])
  if (groupPriority <= 0 || groupPriority > MAX_GROUP_PRIORITY)
    errs.push(invalid(path.child('groupPriorityMinimum'), groupPriority, `must be positive and less than ${MAX_GROUP_PRIORITY}`))
  const versionPriority = int32(s['versionPriority'])
  if (versionPriority <= 0 || versionPriority > MAX_VERSION_PRIORITY)
    errs.push(invalid(path.child('versionPriority'), versionPriority, `must be positive and less than ${MAX_VERSION_PRIORITY}`))

  const caBytes = byteLength(s['caBundle'])
  const skipVerify = s['insecureSkipTLSVerify'] === true
  const service = s['service']
  if (!isPlainObject(service)) {
    // Served by this server itself: there is no connection to secure.
    if (caBytes) errs.push(invalid(path.child('caBundle'), `${caBytes} bytes`, 'local APIServices may not have a caBundle'))
    if (skipVerify) errs.push(invalid(path.child('insecureSkipTLSVerify'), true, 'local APIServices may not have insecureSkipTLSVerify'))
    return errs
  }
  const servicePath = path.child('service')
  if (!text(service['namespace'])) errs.push(required(servicePath.child('namespace')))
  if (!text(service['name'])) errs.push(required(servicePath.child('name')))
  const port = service['port'] ?? DEFAULT_SERVICE_PORT
  if (typeof port === 'number' && !(Number.isInteger(port) && port >= 1 && port <= 65535))
    errs.push(invalid(servicePath.child('port'), port, 'port is not valid: must be between 1 and 65535, inclusive'))
  if (skipVerify && caBytes > 0) errs.push(invalid(path.child('insecureSkipTLSVerify'), true, 'may not be true if caBundle is present'))
  return errs
}

/** An update meets the create rules again; nothing of the spec is fixed. */
export function validateApiServiceUpdate(apiService: KubeObject): FieldError[] {
  return validateApiService(apiService)
}

/** Through `status`: each condition's status is True, False or Unknown. */
export function validateApiServiceStatusUpdate(apiService: KubeObject): FieldError[] {
  const errs: FieldError[] = []
  list(at(apiService, 'status', 'conditions')).forEach((c, i) => {
    const status = at(c, 'status')
    if (!CONDITION_STATUSES.includes(text(status)))
      errs.push(notSupported(fieldPath('status').child('conditions').index(i).child('status'), text(status), CONDITION_STATUSES))
  })
  return errs
}
