/**
 * PodTolerationRestriction: a new pod gets its namespace's default
 * tolerations (the `scheduler.alpha.kubernetes.io/defaultTolerations`
 * annotation, else the configuration's `default`) merged into its own; a
 * pod that is not BestEffort also tolerates `memory-pressure:NoSchedule`;
 * then every toleration must be covered by the namespace's allowed list
 * (`scheduler.alpha.kubernetes.io/tolerationsWhitelist`, else the
 * configuration's `whitelist`), when there is one.
 */
import { z } from 'zod'
import { type ConfigKind, decodeConfigDocument } from '../../config/decode.js'
import { internalError } from '../../machinery/status-error.js'
import { isPlainObject } from '../../machinery/object.js'
import { type FieldError, FieldPath, invalid, notSupported } from '../../machinery/field.js'
import { isQualifiedName, isValidLabelValue } from '../../machinery/names.js'
import type { AdmissionAttributes } from '../attributes.js'

import type { ObjectReader } from '../../client/informer.js'
import { type BothPhases, bareError, objects, type Obj, on, podSpecOf } from './pods.js'
import { allowedBy, mergeTolerations } from './tolerations.js'
import { appendAll } from '../../machinery/append-all.js'

export const DEFAULT_TOLERATIONS_ANNOTATION = 'scheduler.alpha.kubernetes.io/defaultTolerations'
export const TOLERATIONS_WHITELIST_ANNOTATION = 'scheduler.alpha.kubernetes.io/tolerationsWhitelist'

const toleration = z.lazy(() => z.strictObject({
  key: z.string().optional(),
  operator: z.string().optional(),
  value: z.string().optional(),
  effect: z.string().optional(),
  tolerationSeconds: z.number().int().nullish(),
}))

export interface PodTolerationRestrictionConfiguration {
  default: Obj[]
  whitelist: Obj[]
}

const EFFECTS = ['NoExecute', 'NoSchedule', 'PreferNoSchedule']

/** Upstream's toleration validation, for the configuration's two lists. */
export function validateTolerations(list: readonly Obj[], path: FieldPath): FieldError[] {
  return list.flatMap((t, i) => {
    const at = path.index(i)
    const errs: FieldError[] = []
    const key = typeof t['key'] === 'string' ? t['key'] : ''
    const operator = typeof t['operator'] === 'string' ? t['operator'] : ''
    const value = typeof t['value'] === 'string' ? t['value'] : ''
    if (key) for (const msg of isQualifiedName(key)) errs.push(invalid(at.child('key'), key, msg))
    if (!key && operator !== 'Exists')
      errs.push(invalid(at.child('operator'), operator, 'operator must be Exists when `key` is empty, which means "match all values and all keys"'))
    if (t['tolerationSeconds'] != null && t['effect'] !== 'NoExecute')
      errs.push(invalid(at.child('effect'), t['effect'] ?? '', "effect must be 'NoExecute' when `tolerationSeconds` is set"))
    if (operator === '' || operator === 'Equal') for (const msg of isValidLabelValue(value)) errs.push(invalid(at.child('operator'), value, msg))
    else if (operator === 'Exists') {
      if (value) errs.push(invalid(at.child('operator'), t, "value must be empty when `operator` is 'Exists'"))
    } else errs.push(notSupported(at.child('operator'), operator, ['Equal', 'Exists']))
    if (t['effect'] && !EFFECTS.includes(String(t['effect']))) errs.push(notSupported(at.child('effect'), t['effect'], EFFECTS))
    return errs
  })
}

const ConfigurationKind: ConfigKind<PodTolerationRestrictionConfiguration> = {
  kind: 'Configuration',
  apiVersions: ['podtolerationrestriction.admission.k8s.io/v1alpha1'],
  schema: z
    .strictObject({ default: z.array(toleration).nullish(), whitelist: z.array(toleration).nullish() })
    .transform((c) => ({ default: (c.default ?? []) as Obj[], whitelist: (c.whitelist ?? []) as Obj[] })),
  validate: (c) => [...validateTolerations(c.default, FieldPath.root('default')), ...validateTolerations(c.whitelist, FieldPath.root('whitelist'))],
}

export function decodePodTolerationRestrictionConfiguration(raw: unknown, source: string): PodTolerationRestrictionConfiguration {
  return decodeConfigDocument(raw, source, ConfigurationKind)
}

/** A namespace annotation's list; undefined when the namespace has none (an empty list is a list). */
function annotatedTolerations(ns: Obj | undefined, annotation: string): Obj[] | undefined {
  const metadata = ns?.['metadata']
  const annotations = isPlainObject(metadata) && isPlainObject(metadata['annotations']) ? metadata['annotations'] : {}
  const text = annotations[annotation]
  if (typeof text !== 'string') return undefined
  try {
    const list: unknown = JSON.parse(text)
    if (Array.isArray(list)) return objects(list)
  } catch {
    // reported below
  }
  throw internalError(new Error(`cannot read the ${annotation} annotation of namespace ${String(isPlainObject(metadata) ? metadata['name'] : '')}`))
}

/** Upstream's QoS: BestEffort when no container (init included) requests or limits anything. */
function bestEffort(spec: Obj): boolean {
  return [...objects(spec['containers']), ...objects(spec['initContainers'])].every((c) => {
    const r = isPlainObject(c['resources']) ? c['resources'] : {}
    return [r['requests'], r['limits']].every((m) => !isPlainObject(m) || Object.keys(m).length === 0)
  })
}

export function podTolerationRestriction(
  namespaces: ObjectReader,
  configuration: PodTolerationRestrictionConfiguration = { default: [], whitelist: [] },
): BothPhases {
  const check = async (a: AdmissionAttributes, spec: Obj): Promise<void> => {
    const tolerations = objects(spec['tolerations'])
    if (tolerations.length === 0) return
    const ns = await namespaces.read('', a.namespace)
    const fromNamespace = annotatedTolerations(ns, TOLERATIONS_WHITELIST_ANNOTATION)
    const allowed = fromNamespace ?? configuration.whitelist
    if (allowed.length && !allowedBy(tolerations, allowed))
      throw bareError(`pod tolerations (possibly merged with namespace default tolerations) conflict with its ${fromNamespace ? 'namespace' : 'cluster'} whitelist`)
  }
  return {
    name: 'PodTolerationRestriction',
    handles: on('CREATE', 'UPDATE'),
    async admit(a: AdmissionAttributes) {
      const spec = podSpecOf(a)
      if (!spec) return
      const extra: Obj[] = []
      if (a.operation === 'CREATE') {
        const ns = await namespaces.read('', a.namespace)
        appendAll(extra, (annotatedTolerations(ns, DEFAULT_TOLERATIONS_ANNOTATION) ?? configuration.default))
      }
      if (!bestEffort(spec)) extra.push({ key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' })
      if (extra.length) spec['tolerations'] = mergeTolerations(objects(spec['tolerations']), extra)
      await check(a, spec)
    },
    async validate(a: AdmissionAttributes) {
      const spec = podSpecOf(a)
      if (spec) await check(a, spec)
    },
  }
}
