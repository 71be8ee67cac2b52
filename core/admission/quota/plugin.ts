/**
 * The ResourceQuota plugin as the server builds it: its configuration
 * validated, quotas read from the shared informer, charges written to the
 * quota's storage, and the in-process controller that keeps usage counted.
 */
import { startResourceQuotaController } from '../../controllers/resource-quota.js'
import { hasStatusCode } from '../../machinery/status-error.js'
import { resourceQuotas } from '../../resources/core/quotas.js'
import { StorageError } from '../../storage/interface.js'
import type { AdmissionPluginContext, AdmissionPluginInstance } from '../plugins.js'
import { type QuotaAccess, resourceQuotaAdmission } from './admission.js'
import { resourceQuotaConfiguration } from './configuration.js'

export function resourceQuotaPlugin({ registry, informers, logger, now, configuration, runOnce }: AdmissionPluginContext): AdmissionPluginInstance {
  const config = resourceQuotaConfiguration(configuration)
  const quotas = informers.informer(resourceQuotas)
  const store = () => registry.store(resourceQuotas)
  const access: QuotaAccess = {
    quotas: (namespace) => quotas.list(namespace),
    async updateQuota(namespace, name, change) {
      try {
        return await store().storage.guaranteedUpdate(store().key(namespace, name), change)
      } catch (err) {
        // Deleted since it was read: nothing to charge.
        if ((err instanceof StorageError && err.code === 'KeyNotFound') || hasStatusCode(err, 404)) return undefined
        throw err
      }
    },
  }
  // The controller that recounts usage runs once in a cluster; every server's plugin charges quotas.
  let stopController: (() => void) | undefined
  const start = () => startResourceQuotaController(registry, quotas, now, logger)
  if (runOnce) runOnce('resourcequota-controller', start)
  else stopController = start()
  return {
    plugin: resourceQuotaAdmission(access, config, now),
    ready: quotas.ready,
    stop: () => stopController?.(),
  }
}
