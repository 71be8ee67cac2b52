/**
 * OwnerReferencesPermissionEnforcement (upstream: plugin/pkg/admission/gc):
 * setting or changing an object's ownerReferences needs the right to
 * delete that object (an owner reference lets the garbage collector delete
 * it), and setting `blockOwnerDeletion: true` on a reference needs `update`
 * on the owner's `finalizers` subresource (it holds the owner's foreground
 * deletion back). A pod's status is exempt, as upstream.
 */
import { jsonEqual } from '../../apply/typed.js'
import type { Authorizer } from '../../authz/authorizer.js'
import type { Catalogue } from '../../resources/catalogue.js'
import type { KubeObject, OwnerReference } from '../../machinery/object.js'
import type { AdmissionAttributes } from '../attributes.js'
import type { AdmissionPluginFactory } from '../plugins.js'
import type { ValidatingAdmission } from '../validating.js'
import { admissionForbidden } from './forbidden.js'

const refsOf = (o: KubeObject | undefined): OwnerReference[] => o?.metadata.ownerReferences ?? []

/** Go prints the authorizer's reason and its (absent) error, upstream's message keeps both. */
const why = (reason: string): string => `${reason}, <nil>`

/** References that block their owner's deletion now and did not before (a new reference, or one switched on). */
function newlyBlocking(obj: KubeObject | undefined, old: KubeObject | undefined): OwnerReference[] {
  const before = new Map(refsOf(old).map((r) => [r.uid, r]))
  return refsOf(obj).filter((r) => r.blockOwnerDeletion === true && before.get(r.uid)?.blockOwnerDeletion !== true)
}

function groupVersionOf(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/')
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) }
}

export function ownerReferencesPermissionEnforcement(authorizer: Authorizer, catalogue: Pick<Catalogue, 'inGroupVersion'>): ValidatingAdmission {
  const ask = async (a: AdmissionAttributes, verb: string, target: { group: string; version: string; resource: string; subresource: string; namespace: string; name: string }) => {
    try {
      return await authorizer.authorize({
        user: a.user,
        verb,
        isResourceRequest: true,
        path: '',
        namespace: target.namespace,
        apiGroup: target.group,
        apiVersion: target.version,
        resource: target.resource,
        subresource: target.subresource,
        name: target.name,
      })
    } catch (err) {
      return { decision: 'no-opinion' as const, reason: String(err) }
    }
  }
  return {
    name: 'OwnerReferencesPermissionEnforcement',
    handles: (operation) => operation === 'CREATE' || operation === 'UPDATE',
    async validate(a) {
      if (a.entry.group === '' && a.entry.resource === 'pods' && a.subresource === 'status') return
      const changing = a.oldObject ? !jsonEqual(refsOf(a.object), refsOf(a.oldObject)) : refsOf(a.object).length > 0
      if (!changing) return
      const own = await ask(a, 'delete', {
        group: a.entry.group,
        version: a.entry.version,
        resource: a.entry.resource,
        subresource: a.subresource ?? '',
        namespace: a.namespace,
        name: a.name,
      })
      if (own.decision !== 'allow') throw admissionForbidden(a, `cannot set an ownerRef on a resource you can't delete: ${why(own.reason)}`)
      for (const ref of newlyBlocking(a.object, a.oldObject)) {
        const { group, version } = groupVersionOf(ref.apiVersion)
        const owners = catalogue.inGroupVersion(group, version).filter((e) => e.kind === ref.kind)
        if (!owners.length)
          throw admissionForbidden(
            a,
            `cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion ${ref.apiVersion} Kind ${ref.kind}: no matches for kind ${JSON.stringify(ref.kind)} in version ${JSON.stringify(ref.apiVersion)}`,
          )
        for (const owner of owners) {
          const target = { group, version, resource: owner.resource, subresource: 'finalizers', namespace: owner.namespaced ? a.namespace : '', name: ref.name }
          const decision = await ask(a, 'update', target)
          if (decision.decision !== 'allow')
            throw admissionForbidden(a, `cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: ${why(decision.reason)}`)
        }
      }
    },
  }
}

export const ownerReferencesPermissionEnforcementFactory: AdmissionPluginFactory = ({ authorizer, catalogue }) =>
  ownerReferencesPermissionEnforcement(authorizer, catalogue)
