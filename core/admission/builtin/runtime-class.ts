/**
 * RuntimeClass (upstream: plugin/pkg/admission/runtimeclass): a pod created
 * with `spec.runtimeClassName` gets its class's `overhead.podFixed` as
 * `spec.overhead` and its `scheduling` merged in (node selector and
 * tolerations); a class that does not exist, a node selector that
 * contradicts the class's, or an overhead the class does not define, is
 * refused with 403.
 */
import { parseQuantity } from '../../cel/library/quantity.js'
import { pods } from '../../resources/core/pods.js'
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import type { AdmissionAttributes } from '../attributes.js'
import type { MutatingAdmission } from '../mutating.js'
import type { ValidatingAdmission } from '../validating.js'
import { admissionForbidden, isResource } from './forbidden.js'
import { mergeTolerations } from './merge-tolerations.js'
import { specOf } from './storage-classes.js'
import type { AdmissionPluginFactory } from '../plugins.js'
import { runtimeClasses } from '../../resources/groups/node.js'
import { withInformer } from '../informer-plugin.js'

/** Reads a RuntimeClass by name: the index first, then storage, as upstream's lister falls back to a live read. */
export type RuntimeClassReader = (name: string) => Promise<KubeObject | undefined>

type Obj = Record<string, unknown>
const objectAt = (o: unknown, field: string): Obj | undefined => (isPlainObject(o) && isPlainObject(o[field]) ? o[field] : undefined)

/** Resource lists equal by quantity (`1000m` equals `1`); a missing list equals an empty one, as upstream's semantic equality. */
function sameResources(a: Obj | undefined, b: Obj | undefined): boolean {
  const [x, y] = [a ?? {}, b ?? {}]
  if (Object.keys(x).length !== Object.keys(y).length) return false
  return Object.entries(x).every(([name, value]) => {
    if (!(name in y)) return false
    const [p, q] = [parseQuantity(String(value)), parseQuantity(String(y[name]))]
    return p && q ? p.compare(q) === 0 : value === y[name]
  })
}

const CONFLICT_OVERHEAD = "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"

export function runtimeClassAdmission(readClass: RuntimeClassReader): MutatingAdmission & ValidatingAdmission {
  /** The pod and its class; undefined for what the plugin ignores. */
  const prepare = async (a: AdmissionAttributes): Promise<{ spec: Obj; runtimeClass?: KubeObject } | undefined> => {
    // The resource first: reading `a.object` makes the validating phase's copy of the object, of any size.
    if (!isResource(a, pods.group, pods.resource) || !a.object) return undefined
    const spec = (a.object['spec'] ??= {}) as Obj
    const name = spec['runtimeClassName']
    if (typeof name !== 'string' || !name) return { spec }
    const runtimeClass = await readClass(name)
    if (!runtimeClass) throw admissionForbidden(a, `pod rejected: RuntimeClass ${JSON.stringify(name)} not found`)
    return { spec, runtimeClass }
  }
  return {
    name: 'RuntimeClass',
    handles: (operation) => operation === 'CREATE',
    async admit(a) {
      const prepared = await prepare(a)
      if (!prepared?.runtimeClass) return
      const { spec, runtimeClass } = prepared
      const overhead = objectAt(runtimeClass, 'overhead')
      if (overhead) {
        const podFixed = objectAt(overhead, 'podFixed')
        const current = objectAt(spec, 'overhead')
        if (spec['overhead'] !== undefined && spec['overhead'] !== null && !sameResources(podFixed, current)) throw admissionForbidden(a, CONFLICT_OVERHEAD)
        if (podFixed) spec['overhead'] = structuredClone(podFixed)
        else delete spec['overhead']
      }
      const scheduling = objectAt(runtimeClass, 'scheduling')
      if (!scheduling) return
      const classSelector = objectAt(scheduling, 'nodeSelector') ?? {}
      const podSelector = objectAt(spec, 'nodeSelector')
      if (!podSelector) {
        if (Object.keys(classSelector).length) spec['nodeSelector'] = { ...classSelector }
      } else
        for (const [key, value] of Object.entries(classSelector)) {
          if (key in podSelector && podSelector[key] !== value)
            throw admissionForbidden(
              a,
              `conflict: runtimeClass.scheduling.nodeSelector[${key}] = ${String(value)}; pod.spec.nodeSelector[${key}] = ${String(podSelector[key])}`,
            )
          podSelector[key] = value
        }
      const podTolerations = Array.isArray(spec['tolerations']) ? spec['tolerations'] : []
      const classTolerations = Array.isArray(scheduling['tolerations']) ? scheduling['tolerations'] : []
      const merged = mergeTolerations(podTolerations, structuredClone(classTolerations))
      if (merged.length || spec['tolerations'] !== undefined) spec['tolerations'] = merged
    },
    async validate(a) {
      const prepared = await prepare(a)
      if (!prepared) return
      const overhead = objectAt(prepared.runtimeClass, 'overhead')
      const podOverhead = objectAt(specOf(a.object), 'overhead')
      if (overhead) {
        if (!sameResources(objectAt(overhead, 'podFixed'), podOverhead)) throw admissionForbidden(a, CONFLICT_OVERHEAD)
      } else if (specOf(a.object)['overhead'] !== undefined && specOf(a.object)['overhead'] !== null)
        throw admissionForbidden(a, 'pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead')
    },
  }
}

/** Reads RuntimeClasses from a watch-fed index; one it has not seen yet (just created) is read from storage. */
export const runtimeClassFactory: AdmissionPluginFactory = ({ informers }) =>
  withInformer(informers, runtimeClasses, (classes) => runtimeClassAdmission((name) => classes.read('', name)), [pods])
