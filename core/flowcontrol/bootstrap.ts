/**
 * Upstream's `priority-and-fairness-config-producer` post-start hook: the
 * mandatory and suggested FlowSchemas and PriorityLevelConfigurations are
 * created when missing; a mandatory one gets its spec back unless its
 * `apf.kubernetes.io/autoupdate-spec` annotation says "false", a suggested
 * one only while the annotation says "true". A restart never overwrites what
 * an operator took over.
 */
import { type PostStartHook, postStartHook } from '../controllers/post-start-hook.js'
import type { StoredObjects } from '../client/stored-objects.js'
import { hasStatusCode } from '../machinery/status-error.js'
import { LOOPBACK_IDENTITY } from '../machinery/identities.js'
import type { Catalogue, ResourceEntry } from '../resources/catalogue.js'
import { flowSchemas, priorityLevelConfigurations } from '../resources/groups/flowcontrol.js'
import type { KubeObject } from '../machinery/object.js'
import { semanticEqual } from '../resources/rbac/semantic-equal.js'
import type { Logger } from '../logging/logger.js'
import { AUTO_UPDATE_ANNOTATION, BOOTSTRAP_FLOW_SCHEMAS, BOOTSTRAP_PRIORITY_LEVELS, type BootstrapObject } from './bootstrap-objects.js'

export const FLOW_CONTROL_BOOTSTRAP_HOOK = 'priority-and-fairness-config-producer'
const FIELD_MANAGER = 'api-priority-and-fairness-config-producer-v1'

// The stored spec comes back in Go's field order: only its content counts, or a restart would rewrite every object.
const sameJson = semanticEqual

async function ensure(objects: StoredObjects, entry: ResourceEntry, wanted: BootstrapObject, now: () => Date): Promise<void> {
  const ctx = { user: LOOPBACK_IDENTITY, now: now(), fieldManager: FIELD_MANAGER }
  let stored: KubeObject | undefined
  try {
    // From the store, one round trip: a consistent read from the watch cache would first wait for the cache
    // to hear of the writes start-up is making to other resources (the RBAC policy, namespaces, leases).
    stored = await objects.get(entry, '', wanted.name)
  } catch (err) {
    if (!hasStatusCode(err, 404)) throw err
  }
  if (!stored) {
    const body = {
      apiVersion: `${entry.group}/${entry.version}`,
      kind: entry.kind,
      metadata: { name: wanted.name, annotations: { [AUTO_UPDATE_ANNOTATION]: 'true' } },
      spec: wanted.spec,
    }
    try {
      await objects.create(entry, '', body, ctx)
    } catch (err) {
      // Another server on the same storage made it first.
      if (!hasStatusCode(err, 409)) throw err
    }
    return
  }
  const autoUpdate = stored.metadata.annotations?.[AUTO_UPDATE_ANNOTATION]
  const keep = wanted.mandatory ? autoUpdate !== 'false' : autoUpdate === 'true'
  if (!keep || sameJson(stored['spec'], wanted.spec)) return
  await objects.update(entry, '', wanted.name, (current) => ({ ...current, spec: wanted.spec }), ctx)
}

/** The hook, or undefined when flowcontrol.apiserver.k8s.io/v1 is not served. */
export function flowControlBootstrapHook(catalogue: Catalogue, objects: StoredObjects, now: () => Date, logger: Logger): PostStartHook | undefined {
  const levels = catalogue.lookup(priorityLevelConfigurations.group, priorityLevelConfigurations.version, priorityLevelConfigurations.resource)
  const schemas = catalogue.lookup(flowSchemas.group, flowSchemas.version, flowSchemas.resource)
  if (!levels || !schemas) return undefined
  return postStartHook(FLOW_CONTROL_BOOTSTRAP_HOOK, async () => {
    // Levels before the schemas that name them, so no schema is dangling for a moment.
    await Promise.all(BOOTSTRAP_PRIORITY_LEVELS.map((pl) => ensure(objects, levels, pl, now)))
    await Promise.all(BOOTSTRAP_FLOW_SCHEMAS.map((fs) => ensure(objects, schemas, fs, now)))
  }, logger)
}
