/** LimitRanger as the server builds it: limit ranges from a watch-fed index. */
import { limitRanges } from '../../resources/core/quotas.js'
import { pods } from '../../resources/core/pods.js'
import { persistentVolumeClaims } from '../../resources/core/volumes.js'
import type { AdmissionPluginContext, AdmissionPluginInstance } from '../plugins.js'
import { withInformer } from '../informer-plugin.js'
import { limitRanger } from './limit-ranger.js'

export function limitRangerPlugin({ informers }: AdmissionPluginContext): AdmissionPluginInstance {
  return withInformer(informers, limitRanges, (ranges) => limitRanger((namespace) => ranges.list(namespace)), [pods, persistentVolumeClaims])
}
