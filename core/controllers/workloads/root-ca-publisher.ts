/**
 * The root CA certificate publisher (upstream's
 * pkg/controller/certificates/rootcacertpublisher): every namespace holds
 * the ConfigMap `kube-root-ca.crt` whose `ca.crt` is the CA bundle that
 * verifies this server, the one the projected service account volumes
 * mount. It is made when a namespace appears, made again when deleted,
 * and its data put back when changed: `data` becomes `ca.crt` alone (other
 * keys go, as upstream replaces the whole map), `binaryData` and other
 * annotations are left, and the description annotation is written when
 * missing or empty. A namespace being terminated gets none: the namespace
 * lifecycle admission refuses the create and the controller leaves it.
 */
import type { KubeObject } from '../../machinery/object.js'
import { StatusError } from '../../machinery/status-error.js'
import { configMaps as configMapEntry } from '../../resources/core/configmaps.js'
import { namespaces as namespaceEntry, namespacePhase } from '../../resources/core/namespaces.js'
import type { ControllerContext, WorkloadController } from './context.js'
import { isNotFound } from './object-keys.js'
import { WorkQueue } from './work-queue.js'
import { sameJson } from '../../machinery/same-json.js'

export const ROOT_CA_CONFIG_MAP = 'kube-root-ca.crt'
export const DESCRIPTION_ANNOTATION = 'kubernetes.io/description'
/** Upstream's description of the ConfigMap, word for word: clients may show it. */
export const ROOT_CA_DESCRIPTION =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. ' +
  'No other usage is guaranteed across distributions of Kubernetes clusters.'

export const rootCaPublisherController: WorkloadController = {
  name: 'root-ca-cert-publisher',
  serviceAccount: 'root-ca-cert-publisher',
  onByDefault: true,
  needsRootCA: true,
  async start(ctx) {
    const rootCA = ctx.rootCA
    if (rootCA === undefined) throw new Error('root-ca-cert-publisher: no CA bundle to publish')
    const namespaceInformer = ctx.informers.informer(namespaceEntry)
    const configMapInformer = ctx.informers.informer(configMapEntry)
    const queue = new WorkQueue((namespace) => sync(ctx, rootCA, namespace, (ns) => configMapInformer.get(ns, ROOT_CA_CONFIG_MAP)), {
      logger: ctx.logger,
      name: 'root-ca-cert-publisher',
    })
    await Promise.all([namespaceInformer.synced, configMapInformer.synced])
    const ours = (cm: KubeObject): void => {
      if (cm.metadata.name === ROOT_CA_CONFIG_MAP && cm.metadata.namespace) queue.add(cm.metadata.namespace)
    }
    const stops = [
      // As upstream, an update is followed only while the namespace is Active: a terminating one takes no new objects.
      namespaceInformer.addHandlers({
        onAdd: (ns) => queue.add(ns.metadata.name ?? ''),
        onUpdate: (_, ns) => {
          if (namespacePhase(ns) === 'Active') queue.add(ns.metadata.name ?? '')
        },
      }),
      configMapInformer.addHandlers({ onUpdate: (_, cm) => ours(cm), onDelete: ours }),
    ]
    return () => {
      stops.forEach((stop) => stop())
      queue.stop()
    }
  },
}

async function sync(ctx: ControllerContext, rootCA: string, namespace: string, cached: (namespace: string) => KubeObject | undefined): Promise<void> {
  const current = cached(namespace)
  const data = { 'ca.crt': rootCA }
  if (!current) {
    try {
      await ctx.client.create(configMapEntry, namespace, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: ROOT_CA_CONFIG_MAP, namespace, annotations: { [DESCRIPTION_ANNOTATION]: ROOT_CA_DESCRIPTION } },
        data,
      })
    } catch (err) {
      // The namespace gone or being terminated: nothing to publish, and nothing to try again.
      if (isNotFound(err) || isNamespaceTerminating(err)) return
      throw err
    }
    return
  }
  if (sameJson(current['data'] ?? {}, data) && current.metadata.annotations?.[DESCRIPTION_ANNOTATION]) return
  const annotations = { ...current.metadata.annotations, [DESCRIPTION_ANNOTATION]: ROOT_CA_DESCRIPTION }
  // A conflict (written meanwhile) is retried; the update event brings the key back anyway.
  await ctx.client.update(configMapEntry, namespace, { ...current, metadata: { ...current.metadata, annotations }, data })
}

/** The namespace lifecycle admission's refusal (upstream tells it by the NamespaceTerminating cause). */
function isNamespaceTerminating(err: unknown): boolean {
  return err instanceof StatusError && err.code === 403 && (err.details?.causes ?? []).some((cause) => cause.reason === 'NamespaceTerminating')
}
