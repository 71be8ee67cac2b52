/** A pod's volumes (upstream's ValidateVolumes): unique DNS-label names, exactly one source each. */
import { duplicate, type FieldError, type FieldPath, forbiddenField, invalid, required } from '../../machinery/field.js'
import { isDNS1123Label } from '../../machinery/names.js'
import { isPlainObject } from '../../machinery/object.js'
import { objects, volumeSourceKeys } from './pod-spec-defaults.js'
import { appendAll } from '../../machinery/append-all.js'
import { type Checkpointed, checkpointDue } from '../../machinery/time-slice.js'

const FILE_MODE_ERROR = 'must be a number between 0 and 0777 (octal), both inclusive'

function validateMode(source: Record<string, unknown>, key: string, path: FieldPath): FieldError[] {
  const mode = source[key]
  return typeof mode === 'number' && (mode < 0 || mode > 0o777) ? [invalid(path.child(key), mode, FILE_MODE_ERROR)] : []
}

/** Checks what a source must name; the sources not listed here are taken as written. */
function validateSource(kind: string, source: unknown, path: FieldPath): FieldError[] {
  if (!isPlainObject(source)) return []
  switch (kind) {
    case 'secret':
      return [...(source['secretName'] ? [] : [required(path.child('secretName'))]), ...validateMode(source, 'defaultMode', path)]
    case 'configMap':
      return [...(source['name'] ? [] : [required(path.child('name'))]), ...validateMode(source, 'defaultMode', path)]
    case 'downwardAPI':
    case 'projected':
      return validateMode(source, 'defaultMode', path)
    case 'hostPath':
      return source['path'] ? [] : [required(path.child('path'))]
    case 'persistentVolumeClaim':
      return source['claimName'] ? [] : [required(path.child('claimName'))]
    case 'nfs':
      return [...(source['server'] ? [] : [required(path.child('server'))]), ...(source['path'] ? [] : [required(path.child('path'))])]
    default:
      return []
  }
}

/** Validates `volumes` and returns the names the containers may mount, in checkpointed steps. */
export function* validateVolumesInSteps(volumes: unknown, path: FieldPath): Checkpointed<{ names: Set<string>; errs: FieldError[] }> {
  const names = new Set<string>()
  const errs: FieldError[] = []
  const list = objects(volumes)
  for (let i = 0; i < list.length; i++) {
    if (checkpointDue()) yield
    const volume = list[i] as Record<string, unknown>
    const at = path.index(i)
    // Upstream's order: the source, then the name; only a volume without problems can be mounted (or collide).
    const problems: FieldError[] = []
    const kinds = volumeSourceKeys(volume)
    if (kinds.length === 0) problems.push(required(at, 'must specify a volume type'))
    for (const extra of kinds.slice(1)) problems.push(forbiddenField(at.child(extra), 'may not specify more than 1 volume type'))
    const [kind] = kinds
    if (kind) appendAll(problems, validateSource(kind, volume[kind], at.child(kind)))
    const name = typeof volume['name'] === 'string' ? volume['name'] : ''
    if (!name) problems.push(required(at.child('name')))
    else for (const msg of isDNS1123Label(name)) problems.push(invalid(at.child('name'), name, msg))
    if (names.has(name)) problems.push(duplicate(at.child('name'), name))
    if (problems.length === 0) names.add(name)
    appendAll(errs, problems)
  }
  return { names, errs }
}
