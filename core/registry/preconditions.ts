/**
 * What a write must find stored before it goes ahead, as upstream's generic
 * store checks it: the resourceVersion an update carries, and the uid and
 * resourceVersion a delete's preconditions name.
 */
import { badRequest, conflict, type GroupResource, OPTIMISTIC_LOCK_MESSAGE } from '../machinery/status-error.js'
import type { ResourceEntry } from '../resources/catalogue.js'
import type { KubeObject, ObjectMeta } from '../machinery/object.js'
import type { Preconditions } from '../storage/interface.js'
import { fieldPath, invalid, invalidError } from '../machinery/field.js'
import { GoLiteral } from '../machinery/go-format.js'

/** Upstream's parse of a resourceVersion into a revision: absent, empty and zero are all revision 0. */
export function isUnsetResourceVersion(resourceVersion: string | undefined): boolean {
  return !resourceVersion || /^0+$/.test(resourceVersion)
}

/**
 * The body's resourceVersion on update: unset (or "0") is no precondition
 * for kinds whose strategy allows unconditional updates and a 422 for the
 * others; any other value must be the stored one (409).
 */
export function checkUpdatePrecondition(entry: ResourceEntry, resourceVersion: string | undefined, current: KubeObject): void {
  const name = current.metadata.name ?? ''
  if (isUnsetResourceVersion(resourceVersion)) {
    if (entry.strategy.allowUnconditionalUpdate !== false) return
    // Upstream names the resource where the kind goes, and prints the parsed revision with %#v.
    const errs = [invalid(fieldPath('metadata').child('resourceVersion'), new GoLiteral('0x0'), 'must be specified for an update')]
    throw invalidError(entry.group, entry.resource, name, errs)
  }
  if (resourceVersion !== current.metadata.resourceVersion)
    throw conflict({ group: entry.group, resource: entry.resource }, name, OPTIMISTIC_LOCK_MESSAGE)
}

/** A delete's preconditions against the stored object: a different uid or resourceVersion is a 409. */
export function checkDeletePreconditions(gr: GroupResource, current: KubeObject, pre: Preconditions | undefined): void {
  const name = current.metadata.name ?? ''
  if (pre?.uid && pre.uid !== current.metadata.uid)
    throw conflict(gr, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${current.metadata.uid ?? ''}`)
  if (pre?.resourceVersion && pre.resourceVersion !== current.metadata.resourceVersion)
    throw conflict(
      gr,
      name,
      `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${current.metadata.resourceVersion ?? ''}`,
    )
}

/**
 * An update's object against the URL it was sent to (upstream's checkName):
 * it must have a name, the URL's, and no other namespace than the URL's.
 */
export function checkUpdateNames(meta: ObjectMeta, namespace: string, urlName: string): void {
  if (!meta.name) throw badRequest(`the name of the object (${urlName} based on URL) was undeterminable: name must be provided`)
  if (meta.name !== urlName) throw badRequest(`the name of the object (${meta.name}) does not match the name on the URL (${urlName})`)
  if (namespace && meta.namespace && meta.namespace !== namespace)
    throw badRequest(`the namespace of the object (${meta.namespace}) does not match the namespace on the request (${namespace})`)
}

/**
 * A PUT whose object carries a uid updates only the object of that uid:
 * upstream makes the uid a storage precondition, so another uid is the
 * storage layer's conflict, worded as it words it.
 */
export function checkUpdateUid(key: string, uid: string, current: KubeObject, gr: GroupResource): void {
  if (uid === current.metadata.uid) return
  const detail = `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${current.metadata.uid ?? ''}`
  throw conflict(gr, current.metadata.name ?? '', `StorageError: invalid object, Code: 4, Key: ${key}, ResourceVersion: 0, AdditionalErrorMsg: ${detail}`)
}
