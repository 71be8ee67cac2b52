/**
 * A plugin built over one resource's shared informer: it decides from the
 * informer's objects, and is ready (upstream's WaitForReady) once the
 * informer has listed. The server stops the informers, not the plugin.
 *
 * A plugin that reads its objects only for some resources' requests (a
 * pod's service account, a claim's storage class) names them (`readsFor`):
 * its informer then starts with the first such request, which waits for
 * the informer's first list as upstream's plugins wait to be ready, and a
 * server whose clients never write those resources follows none of them.
 * A read outside those requests fails closed (a plugin that names too few
 * resources is a bug to see, not a silent pass).
 */
import type { InformerFactory, GroupVersionResource } from '../client/informer-factory.js'
import type { ObjectReader, SharedInformer } from '../client/informer.js'
import type { AdmissionAttributes } from './attributes.js'
import { admissionForbidden } from './builtin/forbidden.js'
import type { AdmissionPlugin } from './chain.js'

/** A resource whose requests a plugin reads its informer for (any version, any subresource). */
export interface GroupResource {
  readonly group: string
  readonly resource: string
}

/** How long a request waits for the informer's first list before it is refused (upstream's WaitForReady). */
export const INFORMER_WAIT_MS = 10_000

export function withInformer<P extends AdmissionPlugin>(
  informers: InformerFactory,
  resource: GroupVersionResource,
  build: (reader: ObjectReader) => P,
  readsFor?: readonly GroupResource[],
  waitMs = INFORMER_WAIT_MS,
): { plugin: P; ready?: Promise<void> } {
  if (!readsFor) {
    const informer = informers.informer(resource)
    return { plugin: build(informer), ready: informer.ready }
  }
  let informer: SharedInformer | undefined
  let listed: Promise<boolean> | undefined
  const synced = (): SharedInformer => {
    if (!informer?.hasSynced()) throw new Error(`admission read ${resource.resource} before its informer listed them`)
    return informer
  }
  const reader: ObjectReader = {
    get: (namespace, name) => synced().get(namespace, name),
    list: (namespace) => synced().list(namespace),
    read: (namespace, name) => synced().read(namespace, name),
  }
  const untilListed = async (a: AdmissionAttributes): Promise<void> => {
    informer ??= informers.informer(resource)
    if (informer.hasSynced()) return
    listed ??= waitFor(informer.synced, waitMs)
    if (await listed) return
    listed = undefined
    throw admissionForbidden(a, 'not yet ready to handle request')
  }
  const concerns = (a: AdmissionAttributes): boolean => readsFor.some((r) => a.entry.group === r.group && a.entry.resource === r.resource)
  const before =
    <R>(step: (a: AdmissionAttributes) => R) =>
    (a: AdmissionAttributes): R | Promise<Awaited<R>> =>
      concerns(a) && !informer?.hasSynced() ? untilListed(a).then(() => step(a) as Awaited<R>) : step(a)
  const plugin = build(reader)
  const wrapped = {
    ...plugin,
    ...('admit' in plugin ? { admit: before((a) => plugin.admit(a)) } : {}),
    ...('validate' in plugin ? { validate: before((a) => plugin.validate(a)) } : {}),
  }
  return { plugin: wrapped as P }
}

/** True once `promise` settles, false after `ms` without it. */
async function waitFor(promise: Promise<void>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)))
  try {
    return await Promise.race([promise.then(() => true as const), late])
  } finally {
    clearTimeout(timer)
  }
}
