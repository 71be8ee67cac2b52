/**
 * A DaemonSet's ControllerRevisions (upstream's pkg/controller/daemon/update.go
 * history half): each distinct template is kept as a revision named
 * `<daemonset>-<hash>`, labelled `controller-revision-hash: <hash>`, owned
 * by the DaemonSet, whose `data` is the patch that puts the template back
 * (revision-patch.ts). The revision matching
 * the current template is the current one and gets the highest number; old
 * ones beyond `revisionHistoryLimit` go once no pod runs them.
 */
import type { SharedInformer } from '../../client/informer.js'
import type { LabelSelector } from '../../machinery/label-selector.js'
import type { KubeObject } from '../../machinery/object.js'
import { sameJson } from '../../machinery/same-json.js'
import { pods as podEntry } from '../../resources/core/pods.js'
import { controllerRevisions, daemonSets } from '../../resources/groups/apps.js'
import type { ControllerContext } from './context.js'
import { dsSpecOf, REVISION_HASH_LABEL } from './daemonset-pods.js'
import { podTemplateHash } from './deployment-util.js'
import { isConflict, isNotFound } from './object-keys.js'
import { templateOf, templatePatch } from './revision-patch.js'
import { claim, controllerRefTo } from './owned.js'

const revisionOf = (history: KubeObject): number => (typeof history['revision'] === 'number' ? history['revision'] : 0)

/**
 * Whether the revision holds the DaemonSet's current template (upstream's
 * Match). Compared as values, both written as a revision holds them: a
 * revision an earlier release of this server wrote (its keys in the
 * template's order, no null creationTimestamp) still matches, so that no
 * pod is replaced for the encoding alone.
 */
export const holdsTemplate = (ds: KubeObject, history: KubeObject): boolean =>
  sameJson(templatePatch(templateOf(history)), templatePatch(dsSpecOf(ds).template))

export interface History {
  current: KubeObject
  old: KubeObject[]
}

/**
 * The DaemonSet's revisions after adopting its orphans, labelling them and
 * making or renumbering the current one (upstream's constructHistory).
 */
export async function constructHistory(ctx: ControllerContext, ds: KubeObject, informer: SharedInformer, selector: LabelSelector, pods: readonly KubeObject[]): Promise<History> {
  const namespace = ds.metadata.namespace ?? ''
  let owned = await claim(informer.list(namespace), {
    client: ctx.client,
    resource: controllerRevisions,
    owner: ds,
    selector,
    recheckOwner: () => ctx.client.get(daemonSets, namespace, ds.metadata.name ?? '').catch(() => undefined),
  })
  owned = await Promise.all(
    owned.map(async (history) => {
      if (history.metadata.labels?.[REVISION_HASH_LABEL] !== undefined) return history
      // A revision without the label gets its own name, not a hash that could collide.
      const labels = { ...history.metadata.labels, [REVISION_HASH_LABEL]: history.metadata.name ?? '' }
      return ctx.client.update(controllerRevisions, namespace, { ...history, metadata: { ...history.metadata, labels } })
    }),
  )
  const currentOnes = owned.filter((h) => holdsTemplate(ds, h))
  const old = owned.filter((h) => !holdsTemplate(ds, h))
  const nextRevision = Math.max(0, ...old.map(revisionOf)) + 1
  let current: KubeObject
  if (!currentOnes.length) current = await snapshot(ctx, ds, nextRevision)
  else {
    current = await keepOne(ctx, ds, currentOnes, pods)
    if (revisionOf(current) < nextRevision) current = await ctx.client.update(controllerRevisions, namespace, { ...current, revision: nextRevision })
  }
  return { current, old }
}

/** Makes the revision for the current template; a name taken by another template counts a collision and fails the pass. */
async function snapshot(ctx: ControllerContext, ds: KubeObject, revision: number): Promise<KubeObject> {
  const namespace = ds.metadata.namespace ?? ''
  const status = (ds['status'] as { collisionCount?: number } | undefined) ?? {}
  const hash = podTemplateHash(dsSpecOf(ds).template, status.collisionCount)
  const name = `${ds.metadata.name}-${hash}`
  const history: KubeObject = {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name,
      namespace,
      labels: { ...dsSpecOf(ds).template?.metadata?.labels, [REVISION_HASH_LABEL]: hash },
      ...(ds.metadata.annotations ? { annotations: { ...ds.metadata.annotations } } : {}),
      ownerReferences: [controllerRefTo(ds)],
    },
    data: templatePatch(dsSpecOf(ds).template),
    revision,
  }
  try {
    return await ctx.client.create(controllerRevisions, namespace, history)
  } catch (err) {
    if (!isConflict(err)) throw err
  }
  const existing = await ctx.client.get(controllerRevisions, namespace, name)
  if (holdsTemplate(ds, existing)) return existing
  const fresh = await ctx.client.get(daemonSets, namespace, ds.metadata.name ?? '')
  const freshStatus = (fresh['status'] as Record<string, unknown> | undefined) ?? {}
  await ctx.client.updateStatus(daemonSets, namespace, { ...fresh, status: { ...freshStatus, collisionCount: (Number(freshStatus['collisionCount']) || 0) + 1 } })
  throw new Error(`found a hash collision for DaemonSet "${ds.metadata.name}": revision ${name} holds another template`)
}

/** Of several revisions of the current template, keeps the newest; pods of the others are relabelled and the others deleted (upstream's dedupCurHistories). */
async function keepOne(ctx: ControllerContext, ds: KubeObject, candidates: KubeObject[], pods: readonly KubeObject[]): Promise<KubeObject> {
  if (candidates.length === 1) return candidates[0]!
  const namespace = ds.metadata.namespace ?? ''
  const keep = candidates.reduce((best, h) => (revisionOf(h) > revisionOf(best) ? h : best))
  const keepHash = keep.metadata.labels?.[REVISION_HASH_LABEL] ?? ''
  for (const duplicate of candidates) {
    if (duplicate === keep) continue
    const hash = duplicate.metadata.labels?.[REVISION_HASH_LABEL]
    for (const pod of pods) {
      if (pod.metadata.labels?.[REVISION_HASH_LABEL] !== hash) continue
      await ctx.client.patch(podEntry, namespace, pod.metadata.name ?? '', 'merge', { metadata: { labels: { [REVISION_HASH_LABEL]: keepHash } } }).catch(ignoreNotFound)
    }
    await ctx.client.delete(controllerRevisions, namespace, duplicate.metadata.name ?? '').catch(ignoreNotFound)
  }
  return keep
}

/** Deletes the oldest revisions beyond revisionHistoryLimit that no pod runs (upstream's cleanupHistory). */
export async function cleanupHistory(ctx: ControllerContext, ds: KubeObject, old: readonly KubeObject[], pods: readonly KubeObject[]): Promise<void> {
  const excess = old.length - (dsSpecOf(ds).revisionHistoryLimit ?? 10)
  if (excess <= 0) return
  const live = new Set(pods.map((p) => p.metadata.labels?.[REVISION_HASH_LABEL]).filter((h): h is string => h !== undefined))
  let toDelete = excess
  for (const history of [...old].sort((a, b) => revisionOf(a) - revisionOf(b))) {
    if (toDelete <= 0) break
    if (live.has(history.metadata.labels?.[REVISION_HASH_LABEL] ?? '')) continue
    await ctx.client.delete(controllerRevisions, history.metadata.namespace ?? '', history.metadata.name ?? '').catch(ignoreNotFound)
    toDelete--
  }
}

function ignoreNotFound(err: unknown): void {
  if (!isNotFound(err)) throw err
}
