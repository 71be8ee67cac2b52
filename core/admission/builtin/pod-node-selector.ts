/**
 * PodNodeSelector: a pod's nodeSelector gets its namespace's (the
 * `scheduler.alpha.kubernetes.io/node-selector` annotation, else the
 * configuration's `clusterDefaultNodeSelector`) merged in; a pod whose
 * selector conflicts with the namespace's is refused, and so is one that
 * leaves the namespace's allowed list in the configuration.
 *
 * Configuration (upstream's file, with no apiVersion or kind):
 * `podNodeSelectorPluginConfig: { clusterDefaultNodeSelector: "k=v", <namespace>: "k=v,..." }`.
 */
import { z } from 'zod'
import { internalError } from '../../machinery/status-error.js'
import { ConfigFileError, type ConfigProblem, zodProblems } from '../../config/decode.js'
import { FieldPath, invalid } from '../../machinery/field.js'
import type { AdmissionAttributes } from '../attributes.js'

import type { ObjectReader } from '../../client/informer.js'
import { parseLabelMap } from './label-map.js'
import { type BothPhases, on, podSpecOf, refuse, stringMap } from './pods.js'

export const NODE_SELECTOR_ANNOTATION = 'scheduler.alpha.kubernetes.io/node-selector'
const CLUSTER_DEFAULT = 'clusterDefaultNodeSelector'
const KIND = 'PodNodeSelector configuration'

/** Selector text by namespace, and the cluster default under its own key. */
export type PodNodeSelectorConfiguration = Record<string, string>

// Unknown keys are ignored, as upstream reads this file (the legacy form shares it with ImagePolicyWebhook).
const schema = z.lazy(() => z.object({ podNodeSelectorPluginConfig: z.record(z.string(), z.string()).nullish() }))

export function decodePodNodeSelectorConfiguration(raw: unknown, source: string): PodNodeSelectorConfiguration {
  const parsed = schema.safeParse(raw ?? {}, { reportInput: true })
  if (!parsed.success) throw new ConfigFileError(source, KIND, zodProblems(parsed.error.issues))
  const config = parsed.data.podNodeSelectorPluginConfig ?? {}
  const problems: ConfigProblem[] = []
  for (const [namespace, selector] of Object.entries(config)) {
    const labels = parseLabelMap(selector)
    if ('error' in labels) problems.push(invalid(FieldPath.root('podNodeSelectorPluginConfig').key(namespace), selector, labels.error))
  }
  if (problems.length) throw new ConfigFileError(source, KIND, problems)
  return config
}

const conflicts = (x: Record<string, string>, y: Record<string, string>): boolean =>
  Object.entries(x).some(([k, v]) => k in y && y[k] !== v)

function labelsOf(text: string): Record<string, string> {
  const labels = parseLabelMap(text)
  if ('error' in labels) throw internalError(new Error(labels.error))
  return labels
}

export function podNodeSelector(namespaces: ObjectReader, configuration: PodNodeSelectorConfiguration = {}): BothPhases {
  /** The namespace's selector: its annotation, even empty, else the cluster default. */
  const namespaceSelector = async (a: AdmissionAttributes): Promise<Record<string, string>> => {
    const ns = await namespaces.read('', a.namespace)
    const annotation = ns?.metadata.annotations?.[NODE_SELECTOR_ANNOTATION]
    return labelsOf(annotation ?? configuration[CLUSTER_DEFAULT] ?? '')
  }
  const conflictMessage = 'pod node label selector conflicts with its namespace node label selector'
  return {
    name: 'PodNodeSelector',
    handles: on('CREATE'),
    async admit(a: AdmissionAttributes) {
      const spec = podSpecOf(a)
      if (!spec) return
      const own = stringMap(spec['nodeSelector'])
      const fromNamespace = await namespaceSelector(a)
      if (conflicts(fromNamespace, own)) throw refuse(a, conflictMessage)
      const merged = { ...fromNamespace, ...own }
      if (Object.keys(merged).length) spec['nodeSelector'] = merged
    },
    async validate(a: AdmissionAttributes) {
      const spec = podSpecOf(a)
      if (!spec) return
      const own = stringMap(spec['nodeSelector'])
      if (conflicts(await namespaceSelector(a), own)) throw refuse(a, conflictMessage)
      const allowed = labelsOf(configuration[a.namespace] ?? '')
      if (Object.keys(allowed).length === 0) return
      if (Object.entries(own).some(([k, v]) => allowed[k] !== v)) throw refuse(a, 'pod node label selector labels conflict with its namespace whitelist')
    },
  }
}
