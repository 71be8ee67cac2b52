/**
 * Upstream's defaults for pod specs (core/v1 SetDefaults_PodSpec, _Container,
 * _Probe, _Volume ...), shared by everything that embeds one: pods, pod
 * templates and the workload controllers' templates. What only a pod gets
 * (enableServiceLinks, requests copied from limits) is in `applyPodDefaultsInSteps`.
 */
import { isPlainObject } from '../../machinery/object.js'
import { type Checkpointed, checkpointDue } from '../../machinery/time-slice.js'

type Obj = Record<string, unknown>

/** 0644, the mode secret, configMap, downwardAPI and projected volumes give their files. */
const DEFAULT_FILE_MODE = 420

const CONTAINER_LISTS = ['initContainers', 'containers', 'ephemeralContainers'] as const

/** The objects of a list field, skipping anything malformed the decoder let through. */
export function objects(value: unknown): Obj[] {
  return Array.isArray(value) ? value.filter(isPlainObject) : []
}

function setDefault(obj: Obj, key: string, value: unknown): void {
  if (obj[key] === undefined || obj[key] === null || obj[key] === '') obj[key] = value
}

/** `Always` for `:latest` or an untagged image, `IfNotPresent` for any other tag, a digest, or no image yet. */
export function defaultPullPolicy(image: string): string {
  if (!image || image.includes('@')) return 'IfNotPresent'
  const lastSegment = image.slice(image.lastIndexOf('/') + 1)
  const colon = lastSegment.lastIndexOf(':')
  const tag = colon < 0 ? '' : lastSegment.slice(colon + 1)
  return tag === '' || tag === 'latest' ? 'Always' : 'IfNotPresent'
}

function defaultHTTPGet(handler: unknown): void {
  if (!isPlainObject(handler) || !isPlainObject(handler['httpGet'])) return
  setDefault(handler['httpGet'], 'path', '/')
  setDefault(handler['httpGet'], 'scheme', 'HTTP')
}

function defaultProbe(probe: unknown): void {
  if (!isPlainObject(probe)) return
  setDefault(probe, 'timeoutSeconds', 1)
  setDefault(probe, 'periodSeconds', 10)
  setDefault(probe, 'successThreshold', 1)
  setDefault(probe, 'failureThreshold', 3)
  defaultHTTPGet(probe)
}

function defaultFieldRefs(holder: Obj): void {
  if (isPlainObject(holder['fieldRef'])) setDefault(holder['fieldRef'], 'apiVersion', 'v1')
  // A Quantity is never omitted on the wire: an unset divisor reads as "0".
  if (isPlainObject(holder['resourceFieldRef'])) setDefault(holder['resourceFieldRef'], 'divisor', '0')
}

function* defaultContainer(c: Obj): Checkpointed<void> {
  setDefault(c, 'imagePullPolicy', defaultPullPolicy(typeof c['image'] === 'string' ? c['image'] : ''))
  setDefault(c, 'terminationMessagePath', '/dev/termination-log')
  setDefault(c, 'terminationMessagePolicy', 'File')
  if (!isPlainObject(c['resources'])) c['resources'] = {}
  for (const port of objects(c['ports'])) {
    setDefault(port, 'protocol', 'TCP')
    if (checkpointDue()) yield
  }
  for (const env of objects(c['env'])) {
    if (isPlainObject(env['valueFrom'])) defaultFieldRefs(env['valueFrom'])
    if (checkpointDue()) yield
  }
  for (const key of ['livenessProbe', 'readinessProbe', 'startupProbe']) defaultProbe(c[key])
  if (isPlainObject(c['lifecycle'])) {
    defaultHTTPGet(c['lifecycle']['postStart'])
    defaultHTTPGet(c['lifecycle']['preStop'])
  }
}

/** The keys of a volume that name a source (everything but `name`): exactly one when valid. */
export function volumeSourceKeys(volume: Obj): string[] {
  return Object.keys(volume).filter((k) => k !== 'name' && volume[k] !== undefined && volume[k] !== null)
}

function* defaultVolume(volume: Obj): Checkpointed<void> {
  if (volumeSourceKeys(volume).length === 0) volume['emptyDir'] = {}
  for (const key of ['secret', 'configMap', 'downwardAPI', 'projected']) {
    const source = volume[key]
    if (isPlainObject(source)) setDefault(source, 'defaultMode', DEFAULT_FILE_MODE)
  }
  if (isPlainObject(volume['hostPath'])) setDefault(volume['hostPath'], 'type', '')
  if (isPlainObject(volume['downwardAPI'])) yield* defaultDownwardItems(volume['downwardAPI']['items'])
  if (isPlainObject(volume['projected']))
    for (const source of objects(volume['projected']['sources'])) {
      if (isPlainObject(source['downwardAPI'])) yield* defaultDownwardItems(source['downwardAPI']['items'])
      if (checkpointDue()) yield
    }
}

function* defaultDownwardItems(items: unknown): Checkpointed<void> {
  for (const item of objects(items)) {
    defaultFieldRefs(item)
    if (checkpointDue()) yield
  }
}

/**
 * Fills a pod spec's defaults in place, as upstream's SetObjectDefaults for
 * a PodSpec, in checkpointed steps: a spec's lists are as long as a body
 * holds (a million empty containers in 3 MB).
 */
export function* applyPodSpecDefaultsInSteps(spec: Obj): Checkpointed<void> {
  setDefault(spec, 'dnsPolicy', 'ClusterFirst')
  setDefault(spec, 'restartPolicy', 'Always')
  if (!isPlainObject(spec['securityContext'])) spec['securityContext'] = {}
  setDefault(spec, 'terminationGracePeriodSeconds', 30)
  setDefault(spec, 'schedulerName', 'default-scheduler')
  // The deprecated serviceAccount mirrors serviceAccountName, as v1's conversion keeps them.
  if (!spec['serviceAccountName'] && typeof spec['serviceAccount'] === 'string' && spec['serviceAccount'])
    spec['serviceAccountName'] = spec['serviceAccount']
  if (typeof spec['serviceAccountName'] === 'string' && spec['serviceAccountName'])
    spec['serviceAccount'] = spec['serviceAccountName']
  for (const list of CONTAINER_LISTS)
    for (const c of objects(spec[list])) {
      yield* defaultContainer(c)
      if (checkpointDue()) yield
    }
  // On the host's network a container's port is the host's port.
  if (spec['hostNetwork'] === true)
    for (const list of ['initContainers', 'containers'])
      for (const c of objects(spec[list]))
        for (const port of objects(c['ports'])) {
          setDefault(port, 'hostPort', port['containerPort'])
          if (checkpointDue()) yield
        }
  for (const volume of objects(spec['volumes'])) {
    yield* defaultVolume(volume)
    if (checkpointDue()) yield
  }
}

/** The defaults a pod gets beyond its spec's (SetDefaults_Pod), in checkpointed steps. */
export function* applyPodDefaultsInSteps(pod: Obj): Checkpointed<void> {
  if (!isPlainObject(pod['spec'])) pod['spec'] = {}
  const spec = pod['spec'] as Obj
  // A limit without a request requests the limit.
  for (const list of ['initContainers', 'containers'])
    for (const c of objects(spec[list])) {
      if (checkpointDue()) yield
      const resources = c['resources']
      if (!isPlainObject(resources) || !isPlainObject(resources['limits'])) continue
      const requests = isPlainObject(resources['requests']) ? resources['requests'] : {}
      for (const name in resources['limits']) {
        if (requests[name] === undefined) requests[name] = resources['limits'][name]
        if (checkpointDue()) yield
      }
      resources['requests'] = requests
    }
  setDefault(spec, 'enableServiceLinks', true)
  yield* applyPodSpecDefaultsInSteps(spec)
}
