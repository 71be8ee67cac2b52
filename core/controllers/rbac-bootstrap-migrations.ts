/**
 * The two moves upstream's `rbac/bootstrap-roles` hook makes before it
 * reconciles, for stores written by older releases: custom rules kept in a
 * non-aggregated `admin`, `edit` or `view` move to the role that now feeds
 * it, and the subjects of `system:discovery` are copied to the
 * `system:public-info-viewer` binding split off from it. On a store this
 * server started, neither finds anything to do.
 */
import { hasStatusCode } from '../machinery/status-error.js'
import type { Logger } from '../logging/logger.js'
import type { DirectWriteContext } from '../client/object-stores.js'
import type { ResourceObjects } from './stored-resources.js'
import type { KubeObject } from '../machinery/object.js'
import type { BootstrapBinding } from '../resources/rbac/bootstrap-policy-types.js'

/** Aggregated role -> the role whose rules it gathers by label. */
const CLUSTER_ROLES_TO_AGGREGATE: Record<string, string> = {
  admin: 'system:aggregate-to-admin',
  edit: 'system:aggregate-to-edit',
  view: 'system:aggregate-to-view',
}

/** Binding that used to grant both -> the binding split off from it. */
const CLUSTER_ROLE_BINDINGS_TO_SPLIT: Record<string, string> = {
  'system:discovery': 'system:public-info-viewer',
}

async function exists(store: ResourceObjects, name: string): Promise<KubeObject | undefined> {
  try {
    return await store.get('', name)
  } catch (err) {
    if (hasStatusCode(err, 404)) return undefined
    throw err
  }
}

async function createUnlessExists(store: ResourceObjects, body: KubeObject, ctx: DirectWriteContext): Promise<void> {
  try {
    await store.create('', body, ctx)
  } catch (err) {
    if (!hasStatusCode(err, 409)) throw err
  }
}

/** A copy fit to create under another name: what the store sets itself is left out. */
function copyAs(obj: KubeObject, name: string): KubeObject {
  const { labels, annotations } = obj.metadata
  const copy: KubeObject = { ...structuredClone(obj), metadata: { name } }
  if (labels) copy.metadata.labels = structuredClone(labels)
  if (annotations) copy.metadata.annotations = structuredClone(annotations)
  return copy
}

export async function primeAggregatedClusterRoles(store: ResourceObjects, ctx: () => DirectWriteContext, logger: Logger): Promise<void> {
  for (const [oldName, newName] of Object.entries(CLUSTER_ROLES_TO_AGGREGATE)) {
    if (await exists(store, newName)) continue
    const old = await exists(store, oldName)
    if (!old) continue
    // Already aggregated: there are no custom rules left to move (upstream stops looking here).
    if (old['aggregationRule'] !== undefined && old['aggregationRule'] !== null) return
    logger.info({ from: oldName, to: newName }, 'migrating the rules of a cluster role to the role it now aggregates')
    await createUnlessExists(store, copyAs(old, newName), ctx())
  }
}

export async function primeSplitClusterRoleBindings(
  store: ResourceObjects,
  policy: readonly BootstrapBinding[],
  ctx: () => DirectWriteContext,
  logger: Logger,
): Promise<void> {
  for (const [sourceName, targetName] of Object.entries(CLUSTER_ROLE_BINDINGS_TO_SPLIT)) {
    const template = policy.find((b) => b.metadata.name === targetName)
    if (!template) continue
    const source = await exists(store, sourceName)
    if (!source || (await exists(store, targetName))) continue
    logger.info({ from: sourceName, to: targetName }, 'copying the subjects, labels and annotations of a cluster role binding')
    const body: KubeObject = {
      apiVersion: source.apiVersion,
      kind: source.kind,
      metadata: { name: targetName },
      roleRef: structuredClone(template.roleRef),
    }
    if (source.metadata.labels) body.metadata.labels = structuredClone(source.metadata.labels)
    if (source.metadata.annotations) body.metadata.annotations = structuredClone(source.metadata.annotations)
    if (Array.isArray(source['subjects'])) body['subjects'] = structuredClone(source['subjects'])
    await createUnlessExists(store, body, ctx())
  }
}
