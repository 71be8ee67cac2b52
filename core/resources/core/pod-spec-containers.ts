/**
 * One container's rules (upstream's validateContainerCommon and friends):
 * ports, environment, mounts, pull policy, resources, probes and security
 * context, each reported at the exact field a user wrote.
 */
import {
  duplicate,
  type FieldError,
  type FieldPath,
  forbiddenField,
  invalid,
  notFoundField,
  notSupported,
  required,
} from '../../machinery/field.js'
import { isPlainObject } from '../../machinery/object.js'
import { objects } from './pod-spec-defaults.js'
import { validateResourcesInSteps } from './pod-spec-resources.js'
import { appendAll, appendAllInSteps } from '../../machinery/append-all.js'
import { type Checkpointed, checkpointDue } from '../../machinery/time-slice.js'

type Obj = Record<string, unknown>

export interface PodSpecValidationOptions {
  /** `--allow-privileged`: containers may run privileged. */
  allowPrivileged?: boolean
}

const PORT_RANGE = 'must be between 1 and 65535, inclusive'
const ID_RANGE = 'must be between 0 and 2147483647, inclusive'
const PROTOCOLS = ['SCTP', 'TCP', 'UDP']
const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never']
const HTTP_SCHEMES = ['HTTP', 'HTTPS']
const PROBE_HANDLERS = ['exec', 'httpGet', 'tcpSocket', 'grpc']
const ENV_SOURCES = ['fieldRef', 'resourceFieldRef', 'configMapKeyRef', 'secretKeyRef']

const isSet = (v: unknown): boolean => v !== undefined && v !== null

/** upstream's IsValidPortName: an IANA service name. */
export function portNameErrors(name: string): string[] {
  const errs: string[] = []
  if (name.length > 15) errs.push('must be no more than 15 characters')
  if (!/^[-a-z0-9]+$/.test(name)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)')
  if (!/[a-z]/.test(name)) errs.push('must contain at least one letter (a-z)')
  if (name.includes('--')) errs.push('must not contain consecutive hyphens')
  if (name.startsWith('-') || name.endsWith('-')) errs.push('must not begin or end with a hyphen')
  return errs
}

const validPort = (n: unknown): boolean => Number.isInteger(n) && (n as number) >= 1 && (n as number) <= 65535

function* validatePorts(ports: unknown, path: FieldPath): Checkpointed<FieldError[]> {
  const errs: FieldError[] = []
  const names = new Set<string>()
  const list = objects(ports)
  for (let i = 0; i < list.length; i++) {
    if (checkpointDue()) yield
    const port = list[i] as Obj
    const at = path.index(i)
    const name = port['name']
    if (typeof name === 'string' && name) {
      const msgs = portNameErrors(name)
      for (const msg of msgs) errs.push(invalid(at.child('name'), name, msg))
      if (!msgs.length && names.has(name)) errs.push(duplicate(at.child('name'), name))
      names.add(name)
    }
    const containerPort = port['containerPort']
    if (!containerPort) errs.push(required(at.child('containerPort')))
    else if (!validPort(containerPort)) errs.push(invalid(at.child('containerPort'), containerPort, PORT_RANGE))
    if (port['hostPort'] && !validPort(port['hostPort'])) errs.push(invalid(at.child('hostPort'), port['hostPort'], PORT_RANGE))
    const protocol = port['protocol']
    if (!protocol) errs.push(required(at.child('protocol')))
    else if (!PROTOCOLS.includes(String(protocol))) errs.push(notSupported(at.child('protocol'), protocol, PROTOCOLS))
  }
  return errs
}

/** upstream's relaxed environment variable names: printable ASCII without '='. */
function envNameErrors(name: string): string[] {
  return /^[\x20-\x3c\x3e-\x7e]+$/.test(name)
    ? []
    : ["a valid environment variable name must consist only of printable ASCII characters other than '='"]
}

function* validateEnv(env: unknown, path: FieldPath): Checkpointed<FieldError[]> {
  const errs: FieldError[] = []
  const list = objects(env)
  for (let i = 0; i < list.length; i++) {
    if (checkpointDue()) yield
    const ev = list[i] as Obj
    const at = path.index(i)
    const name = typeof ev['name'] === 'string' ? ev['name'] : ''
    if (!name) errs.push(required(at.child('name')))
    else for (const msg of envNameErrors(name)) errs.push(invalid(at.child('name'), name, msg))
    const from = ev['valueFrom']
    if (!isPlainObject(from)) continue
    const fromPath = at.child('valueFrom')
    const sources = ENV_SOURCES.filter((k) => isSet(from[k]))
    if (sources.length === 0)
      errs.push(invalid(fromPath, '', 'must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`'))
    else if (sources.length > 1) errs.push(invalid(fromPath, '', 'may not have more than one field specified at a time'))
    if (ev['value'] && sources.length) errs.push(invalid(fromPath, '', 'may not be specified when `value` is not empty'))
    const fieldRef = from['fieldRef']
    if (isPlainObject(fieldRef) && !fieldRef['fieldPath']) errs.push(required(fromPath.child('fieldRef').child('fieldPath')))
    for (const key of ['configMapKeyRef', 'secretKeyRef']) {
      const ref = from[key]
      if (isPlainObject(ref) && !ref['key']) errs.push(required(fromPath.child(key).child('key')))
    }
  }
  return errs
}

function* validateMounts(mounts: unknown, volumes: ReadonlySet<string>, path: FieldPath): Checkpointed<FieldError[]> {
  const errs: FieldError[] = []
  const paths = new Set<string>()
  const list = objects(mounts)
  for (let i = 0; i < list.length; i++) {
    if (checkpointDue()) yield
    const m = list[i] as Obj
    const at = path.index(i)
    const name = typeof m['name'] === 'string' ? m['name'] : ''
    if (!name) errs.push(required(at.child('name')))
    // Upstream looks the name up even when it is empty: a mount of no volume is also not found.
    if (!volumes.has(name)) errs.push(notFoundField(at.child('name'), name))
    const mountPath = typeof m['mountPath'] === 'string' ? m['mountPath'] : ''
    if (!mountPath) errs.push(required(at.child('mountPath')))
    else if (paths.has(mountPath)) errs.push(invalid(at.child('mountPath'), mountPath, 'must be unique'))
    paths.add(mountPath)
  }
  return errs
}

function validatePortRef(port: unknown, path: FieldPath): FieldError[] {
  if (typeof port === 'string') return portNameErrors(port).map((msg) => invalid(path, port, msg))
  return validPort(port) ? [] : [invalid(path, port ?? 0, PORT_RANGE)]
}

/** A probe's or lifecycle hook's handler: exactly one kind, each well formed. */
function validateHandler(handler: Obj, kinds: readonly string[], path: FieldPath): FieldError[] {
  const present = kinds.filter((k) => isSet(handler[k]))
  if (present.length === 0) return [required(path, 'must specify a handler type')]
  const errs = present.slice(1).map((k) => forbiddenField(path.child(k), 'may not specify more than 1 handler type'))
  const exec = handler['exec']
  if (isPlainObject(exec) && !(Array.isArray(exec['command']) && exec['command'].length))
    errs.push(required(path.child('exec').child('command')))
  const httpGet = handler['httpGet']
  if (isPlainObject(httpGet)) {
    const at = path.child('httpGet')
    if (!httpGet['path']) errs.push(required(at.child('path')))
    appendAll(errs, validatePortRef(httpGet['port'], at.child('port')))
    if (httpGet['scheme'] && !HTTP_SCHEMES.includes(String(httpGet['scheme'])))
      errs.push(notSupported(at.child('scheme'), httpGet['scheme'], HTTP_SCHEMES))
  }
  const tcp = handler['tcpSocket']
  if (isPlainObject(tcp)) appendAll(errs, validatePortRef(tcp['port'], path.child('tcpSocket').child('port')))
  const grpc = handler['grpc']
  if (isPlainObject(grpc) && !validPort(grpc['port'])) errs.push(invalid(path.child('grpc').child('port'), grpc['port'] ?? 0, PORT_RANGE))
  return errs
}

function validateProbe(probe: unknown, path: FieldPath, successMustBeOne: boolean): FieldError[] {
  if (!isPlainObject(probe)) return []
  const errs = validateHandler(probe, PROBE_HANDLERS, path)
  for (const key of ['initialDelaySeconds', 'timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold']) {
    const v = probe[key]
    if (typeof v === 'number' && v < 0) errs.push(invalid(path.child(key), v, 'must be greater than or equal to 0'))
  }
  if (successMustBeOne && typeof probe['successThreshold'] === 'number' && probe['successThreshold'] !== 1)
    errs.push(invalid(path.child('successThreshold'), probe['successThreshold'], 'must be 1'))
  return errs
}

/** runAsUser, runAsGroup: what both the pod's and a container's security context carry. */
export function validateIds(sc: Obj, keys: readonly string[], path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  for (const key of keys) {
    const v = sc[key]
    if (typeof v === 'number' && (v < 0 || v > 2147483647)) errs.push(invalid(path.child(key), v, ID_RANGE))
  }
  return errs
}

function validateSecurityContext(sc: unknown, path: FieldPath, opts: PodSpecValidationOptions): FieldError[] {
  if (!isPlainObject(sc)) return []
  const errs: FieldError[] = []
  if (sc['privileged'] === true && !opts.allowPrivileged)
    errs.push(forbiddenField(path.child('privileged'), 'disallowed by cluster policy'))
  appendAll(errs, validateIds(sc, ['runAsUser', 'runAsGroup'], path))
  if (sc['privileged'] === true && sc['allowPrivilegeEscalation'] === false)
    errs.push(invalid(path, sc, 'cannot set `allowPrivilegeEscalation` to false and `privileged` to true'))
  return errs
}

/** A pod's container image may not start or end with whitespace (templates may: some tools mark an image to fill in so). */
export function imageWhitespaceErrors(c: Obj, path: FieldPath): FieldError[] {
  const image = c['image']
  return typeof image === 'string' && image.trim() !== image ? [invalid(path.child('image'), image, 'must not have leading or trailing whitespace')] : []
}

/** The rules every container kind shares, in checkpointed steps; names and uniqueness are the caller's. */
export function* validateContainerInSteps(
  c: Obj,
  path: FieldPath,
  volumes: ReadonlySet<string>,
  opts: PodSpecValidationOptions,
  kind: 'container' | 'init' | 'ephemeral',
): Checkpointed<FieldError[]> {
  const errs: FieldError[] = []
  // Every container names its image, a template's too; the whitespace rule is a pod's alone (see validatePodOnlyInSteps),
  // but an ephemeral container only ever belongs to a pod, so it meets it here.
  if (!c['image']) errs.push(required(path.child('image')))
  else if (kind === 'ephemeral') appendAll(errs, imageWhitespaceErrors(c, path))
  yield* appendAllInSteps(errs, yield* validatePorts(c['ports'], path.child('ports')))
  yield* appendAllInSteps(errs, yield* validateEnv(c['env'], path.child('env')))
  yield* appendAllInSteps(errs, yield* validateMounts(c['volumeMounts'], volumes, path.child('volumeMounts')))
  const pull = c['imagePullPolicy']
  if (!pull) errs.push(required(path.child('imagePullPolicy')))
  else if (!PULL_POLICIES.includes(String(pull))) errs.push(notSupported(path.child('imagePullPolicy'), pull, PULL_POLICIES))
  const tmp = c['terminationMessagePolicy']
  if (!tmp) errs.push(required(path.child('terminationMessagePolicy')))
  else if (tmp !== 'File' && tmp !== 'FallbackToLogsOnError')
    errs.push(invalid(path.child('terminationMessagePolicy'), tmp, "must be 'File' or 'FallbackToLogsOnError'"))
  yield* appendAllInSteps(errs, yield* validateResourcesInSteps(c['resources'], path.child('resources')))
  appendAll(errs, validateSecurityContext(c['securityContext'], path.child('securityContext'), opts))
  if (kind === 'container') {
    appendAll(errs, validateProbe(c['livenessProbe'], path.child('livenessProbe'), true))
    appendAll(errs, validateProbe(c['readinessProbe'], path.child('readinessProbe'), false))
    appendAll(errs, validateProbe(c['startupProbe'], path.child('startupProbe'), true))
    const lifecycle = c['lifecycle']
    if (isPlainObject(lifecycle))
      for (const hook of ['postStart', 'preStop'])
        if (isPlainObject(lifecycle[hook]))
          appendAll(errs, validateHandler(lifecycle[hook], ['exec', 'httpGet', 'tcpSocket', 'sleep'], path.child('lifecycle').child(hook)))
  } else {
    // Init and ephemeral containers run to completion or on demand: no probes, no lifecycle hooks.
    for (const key of ['lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe'])
      if (isSet(c[key]) && !(kind === 'init' && c['restartPolicy'] === 'Always'))
        errs.push(forbiddenField(path.child(key), kind === 'init' ? `may not be set for init containers without restartPolicy=Always` : 'cannot be set for an Ephemeral Container'))
  }
  return errs
}
