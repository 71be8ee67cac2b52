/**
 * DefaultIngressClass (upstream: plugin/pkg/admission/defaultingressclass):
 * an Ingress created without `spec.ingressClassName` and without the
 * legacy `kubernetes.io/ingress.class` annotation gets the default
 * IngressClass, the newest when several are marked default.
 */
import { ingresses } from '../../resources/groups/networking.js'
import type { KubeObject } from '../../machinery/object.js'
import type { MutatingAdmission } from '../mutating.js'
import { isResource } from './forbidden.js'
import { newestDefault, specOf } from './storage-classes.js'
import type { AdmissionPluginFactory } from '../plugins.js'
import { ingressClasses } from '../../resources/groups/networking.js'
import { withInformer } from '../informer-plugin.js'

const LEGACY_CLASS_ANNOTATION = 'kubernetes.io/ingress.class'
const DEFAULT_CLASS_ANNOTATION = 'ingressclass.kubernetes.io/is-default-class'

const isDefaultIngressClass = (o: KubeObject): boolean => o.metadata.annotations?.[DEFAULT_CLASS_ANNOTATION] === 'true'

export function defaultIngressClass(ingressClasses: () => readonly KubeObject[]): MutatingAdmission {
  return {
    name: 'DefaultIngressClass',
    handles: (operation) => operation === 'CREATE',
    admit(a) {
      const ingress = a.object
      if (!ingress || !isResource(a, ingresses.group, ingresses.resource)) return
      const named = specOf(ingress)['ingressClassName']
      if ((named !== undefined && named !== null) || ingress.metadata.annotations?.[LEGACY_CLASS_ANNOTATION] !== undefined) return
      const chosen = newestDefault(ingressClasses(), isDefaultIngressClass)
      if (!chosen) return
      const spec = (ingress['spec'] ??= {}) as Record<string, unknown>
      spec['ingressClassName'] = chosen.metadata.name
    },
  }
}

/** Reads the IngressClasses from a watch-fed index. */
export const defaultIngressClassFactory: AdmissionPluginFactory = ({ informers }) =>
  withInformer(informers, ingressClasses, (classes) => defaultIngressClass(() => classes.list()), [ingresses])
