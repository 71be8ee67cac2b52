/** PodSecurity as the server builds it: its configuration validated, namespaces from a watch-fed index. */
import { namespaces } from '../../resources/core/namespaces.js'
import { pods } from '../../resources/core/pods.js'
import type { AdmissionPluginContext, AdmissionPluginInstance } from '../plugins.js'
import { WatchedObjects } from '../watched-objects.js'
import { podSecurityAdmission } from './admission.js'
import { podSecurityConfiguration } from './configuration.js'

export function podSecurityPlugin({ registry, logger, configuration }: AdmissionPluginContext): AdmissionPluginInstance {
  const config = podSecurityConfiguration(configuration)
  const index = new WatchedObjects(registry, namespaces, logger)
  const plugin = podSecurityAdmission(config, {
    async namespace(name) {
      const known = index.get('', name)
      if (known) return known
      // Created a moment ago and not yet seen by the watch: read it.
      const store = registry.store(namespaces)
      return store.storage.get(store.key('', name))
    },
    async pods(namespace) {
      const store = registry.store(pods)
      return (await store.storage.list(store.prefix(namespace))).items
    },
  })
  return { plugin, ready: index.ready, stop: () => index.stop() }
}
