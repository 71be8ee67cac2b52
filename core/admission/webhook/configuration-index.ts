/**
 * The webhook configurations and namespace labels the webhook plugins
 * decide from, kept in memory from a list and a watch (upstream's informers),
 * so a request never reads storage for them and a configuration written,
 * changed or deleted acts on the next request, without a restart.
 * Configurations are called in the order of their names, their webhooks in
 * the order they are listed, as upstream sorts them.
 */
import type { InformerFactory } from '../../client/informer-factory.js'
import { followInformer, type InformerFollower } from '../../client/informer.js'
import type { Catalogue } from '../../resources/catalogue.js'
import type { KubeObject } from '../../machinery/object.js'
import { type AdmissionWebhook, type WebhookType, webhooksOf } from './webhook.js'

const RESOURCES: Record<WebhookType, string> = {
  mutating: 'mutatingwebhookconfigurations',
  validating: 'validatingwebhookconfigurations',
}

export interface WebhookIndex {
  /** Every webhook of the type, in calling order. */
  webhooks(): readonly AdmissionWebhook[]
  /** The labels of a namespace, or undefined when the index has not seen it. */
  namespaceLabels(name: string): Record<string, string> | undefined
  readonly ready: Promise<void>
  stop(): void
}

function feedResource(sources: WebhookSources, group: string, resource: string, onEvent: Parameters<typeof followInformer>[1]): InformerFollower | undefined {
  const entry = sources.catalogue.lookup(group, 'v1', resource)
  // A resource switched off with --runtime-config has no objects to follow.
  if (!entry) return undefined
  return followInformer(sources.informers.informer(entry), onEvent)
}

/** Where the index reads from: the served resources and the shared informers. */
export interface WebhookSources {
  readonly catalogue: Catalogue
  readonly informers: InformerFactory
}

export function watchWebhookConfigurations(sources: WebhookSources, type: WebhookType): WebhookIndex {
  const byConfiguration = new Map<string, AdmissionWebhook[]>()
  let ordered: AdmissionWebhook[] = []
  const labels = new Map<string, Record<string, string>>()

  const reorder = (): void => {
    ordered = [...byConfiguration.keys()].sort().flatMap((name) => byConfiguration.get(name) ?? [])
  }
  const configurations = feedResource(
    sources,
    'admissionregistration.k8s.io',
    RESOURCES[type],
    (event, obj: KubeObject) => {
      const name = obj.metadata.name ?? ''
      if (event === 'delete') byConfiguration.delete(name)
      else byConfiguration.set(name, webhooksOf(obj, type))
      reorder()
    },
  )
  const namespaces = feedResource(
    sources,
    '',
    'namespaces',
    (event, obj: KubeObject) => {
      const name = obj.metadata.name ?? ''
      if (event === 'delete') labels.delete(name)
      else labels.set(name, obj.metadata.labels ?? {})
    },
  )
  return {
    webhooks: () => ordered,
    namespaceLabels: (name) => labels.get(name),
    ready: Promise.all([configurations?.ready, namespaces?.ready]).then(() => undefined),
    stop() {
      configurations?.stop()
      namespaces?.stop()
    },
  }
}
