/** PodSecurity as the server builds it: its configuration validated, namespaces from the shared informer. */
import { namespaces } from '../../resources/core/namespaces.js'
import { pods } from '../../resources/core/pods.js'
import type { AdmissionPluginContext, AdmissionPluginInstance } from '../plugins.js'
import { podSecurityAdmission } from './admission.js'
import type { PodSecurityConfiguration } from './configuration.js'

/** `configuration` is decoded beforehand (podSecurityConfiguration), so that a bad one is a start-up problem naming its place in the file. */
export function podSecurityPlugin({ stored, informers, configuration: config }: AdmissionPluginContext & { configuration: PodSecurityConfiguration }): AdmissionPluginInstance {
  const index = informers.informer(namespaces)
  const plugin = podSecurityAdmission(config, {
    // One created a moment ago and not yet seen by the watch is read from storage.
    namespace: (name) => index.read('', name),
    pods: (namespace) => stored.list(pods, namespace),
  })
  return { plugin, ready: index.ready }
}
