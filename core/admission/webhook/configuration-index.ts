/**
 * The webhook configurations and namespace labels the webhook plugins
 * decide from, kept in memory from a list and a watch (upstream's informers),
 * so a request never reads storage for them and a configuration written,
 * changed or deleted acts on the next request, without a restart.
 * Configurations are called in the order of their names, their webhooks in
 * the order they are listed, as upstream sorts them.
 */
import { feedObjects, type ObjectFeed } from '../../authz/object-feed.js'
import type { Logger } from '../../logging/logger.js'
import type { Registry } from '../../registry/registry.js'
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

function feedResource(registry: Registry, group: string, resource: string, onEvent: Parameters<typeof feedObjects>[2], logger: Logger): ObjectFeed | undefined {
  const entry = registry.catalogue.lookup(group, 'v1', resource)
  // A resource switched off with --runtime-config has no objects to follow.
  if (!entry) return undefined
  const store = registry.store(entry)
  return feedObjects(store.storage, store.prefix(''), onEvent, logger)
}

export function watchWebhookConfigurations(registry: Registry, type: WebhookType, logger: Logger): WebhookIndex {
  const byConfiguration = new Map<string, AdmissionWebhook[]>()
  let ordered: AdmissionWebhook[] = []
  const labels = new Map<string, Record<string, string>>()

  const reorder = (): void => {
    ordered = [...byConfiguration.keys()].sort().flatMap((name) => byConfiguration.get(name) ?? [])
  }
  const configurations = feedResource(
    registry,
    'admissionregistration.k8s.io',
    RESOURCES[type],
    (event, obj: KubeObject) => {
      const name = obj.metadata.name ?? ''
      if (event === 'delete') byConfiguration.delete(name)
      else byConfiguration.set(name, webhooksOf(obj, type))
      reorder()
    },
    logger,
  )
  const namespaces = feedResource(
    registry,
    '',
    'namespaces',
    (event, obj: KubeObject) => {
      const name = obj.metadata.name ?? ''
      if (event === 'delete') labels.delete(name)
      else labels.set(name, obj.metadata.labels ?? {})
    },
    logger,
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
