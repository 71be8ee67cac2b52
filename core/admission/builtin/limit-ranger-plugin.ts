/** LimitRanger as the server builds it: limit ranges from a watch-fed index. */
import { limitRanges } from '../../resources/core/quotas.js'
import type { AdmissionPluginContext, AdmissionPluginInstance } from '../plugins.js'
import { withObjectIndex } from '../object-index.js'
import { limitRanger } from './limit-ranger.js'

export function limitRangerPlugin({ registry, logger }: AdmissionPluginContext): AdmissionPluginInstance {
  return withObjectIndex(registry, limitRanges, logger, (ranges) => limitRanger((namespace) => ranges.list(namespace)))
}
