/**
 * The system's own priority classes, created at start as upstream's
 * `scheduling/bootstrap-system-priority-classes` post-start hook does, so
 * that pods asking for `system-node-critical` or `system-cluster-critical`
 * find them. A class that already exists is left as it is: a restart never
 * overwrites what is stored.
 */
import { type PostStartHook, postStartHook } from './post-start-hook.js'
import { hasStatusCode } from '../machinery/status-error.js'
import type { Logger } from '../logging/logger.js'
import { LOOPBACK_IDENTITY } from '../machinery/identities.js'
import type { StoredResources } from './stored-resources.js'
import type { ResourceEntry } from '../resources/catalogue.js'
import { priorityClasses } from '../resources/groups/scheduling.js'
import { SYSTEM_PRIORITY_CLASSES } from '../resources/scheduling/priority-class-rules.js'

/** The post-start hook's name; its health check is `poststarthook/<name>`. */
export const SYSTEM_PRIORITY_CLASSES_HOOK = 'scheduling/bootstrap-system-priority-classes'

// The descriptions upstream gives the two classes: `kubectl get pc -o yaml` shows them.
const DESCRIPTIONS: Record<string, string> = {
  'system-node-critical': 'Used for system critical pods that must not be moved from their current node.',
  'system-cluster-critical': 'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.',
}

/**
 * The hook, or undefined when `--runtime-config` turned scheduling.k8s.io/v1
 * off: upstream installs it only for a served group.
 */
export function systemPriorityClassesHook(stores: StoredResources, now: () => Date, logger: Logger): PostStartHook | undefined {
  const entry = stores.catalogue.lookup(priorityClasses.group, priorityClasses.version, priorityClasses.resource)
  if (!entry) return undefined
  return postStartHook(SYSTEM_PRIORITY_CLASSES_HOOK, () => ensureSystemPriorityClasses(stores, entry, now), logger)
}

/**
 * Creates each missing system class through the store, so it is defaulted
 * (preemptionPolicy) and validated like any other; the validation accepts
 * the reserved `system-` names exactly with these values.
 */
export async function ensureSystemPriorityClasses(stores: StoredResources, entry: ResourceEntry, now: () => Date): Promise<void> {
  const store = stores.store(entry)
  for (const pc of SYSTEM_PRIORITY_CLASSES) {
    try {
      // Only its being there counts: read-only, so the store hands out its own object instead of a copy.
      // From the cache as it stands ("0"), not a consistent read that waits for the cache to hear of every
      // write start-up makes meanwhile: a class it has not heard of yet is created again and answered 409,
      // and a system class cannot be deleted.
      await store.get('', pc.name, '0', true)
      continue
    } catch (err) {
      if (!hasStatusCode(err, 404)) throw err
    }
    const body = {
      apiVersion: `${entry.group}/${entry.version}`,
      kind: entry.kind,
      metadata: { name: pc.name },
      value: pc.value,
      ...(pc.globalDefault ? { globalDefault: true } : {}),
      description: DESCRIPTIONS[pc.name],
    }
    try {
      await store.create('', body, { user: LOOPBACK_IDENTITY, now: now(), dryRun: false })
    } catch (err) {
      // Another server sharing the storage may have created it first.
      if (!hasStatusCode(err, 409)) throw err
    }
  }
}
