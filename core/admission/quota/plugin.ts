/**
 * The ResourceQuota plugin as the server builds it: its configuration
 * validated, quotas read from the shared informer, charges written to the
 * quota's storage, and the in-process controller that keeps usage counted.
 */
import type { SharedInformer } from '../../client/informer.js'
import type { KubeObject } from '../../machinery/object.js'
import { resourceQuotas } from '../../resources/core/quotas.js'
import type { AdmissionPluginContext, AdmissionPluginInstance } from '../plugins.js'
import { type QuotaAccess, resourceQuotaAdmission } from './admission.js'
import type { ResourceQuotaConfiguration } from './configuration.js'

/**
 * What ResourceQuota reaches below the API: a quota's usage charged in its
 * storage in place (no request, no admission, on every charged write), and
 * the in-process controller that recounts usage.
 */
export interface QuotaStorage {
  /** Replaces the stored quota with `change(current)`, asked again after a conflicting write; undefined when the quota is gone. */
  updateQuota(namespace: string, name: string, change: (current: KubeObject) => KubeObject): Promise<KubeObject | undefined>
  /** Starts the controller that keeps the quotas' usage counted, over their informer; answers its stop. */
  startController(quotas: SharedInformer): () => void
}

/** `configuration` is decoded beforehand (resourceQuotaConfiguration), so that a bad one is a start-up problem naming its place in the file. */
export function resourceQuotaPlugin({
  quotaStorage,
  informers,
  configuration: config,
  now,
  runOnce,
}: AdmissionPluginContext & { configuration: ResourceQuotaConfiguration }): AdmissionPluginInstance {
  const quotas = informers.informer(resourceQuotas)
  const access: QuotaAccess = {
    quotas: (namespace) => quotas.list(namespace),
    updateQuota: (namespace, name, change) => quotaStorage.updateQuota(namespace, name, change),
  }
  // The controller that recounts usage runs once in a cluster; every server's plugin charges quotas.
  let stopController: (() => void) | undefined
  const start = () => quotaStorage.startController(quotas)
  if (runOnce) runOnce('resourcequota-controller', start)
  else stopController = start()
  return {
    plugin: resourceQuotaAdmission(access, config, now),
    ready: quotas.ready,
    stop: () => stopController?.(),
  }
}
