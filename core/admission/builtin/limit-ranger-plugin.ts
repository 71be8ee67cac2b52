/** LimitRanger as the server builds it: limit ranges from a watch-fed index. */
import { limitRanges } from '../../resources/core/quotas.js'
import type { AdmissionPluginContext, AdmissionPluginInstance } from '../plugins.js'
import { WatchedObjects } from '../watched-objects.js'
import { limitRanger } from './limit-ranger.js'

export function limitRangerPlugin({ registry, logger }: AdmissionPluginContext): AdmissionPluginInstance {
  const ranges = new WatchedObjects(registry, limitRanges, logger)
  return { plugin: limitRanger((namespace) => ranges.list(namespace)), ready: ranges.ready, stop: () => ranges.stop() }
}
