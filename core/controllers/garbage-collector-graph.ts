/**
 * The garbage collector's picture of who owns whom, built from watch events
 * (upstream's GraphBuilder). Nodes are the objects seen so far, keyed by uid;
 * the owner -> dependents index is kept by owner uid whether or not the owner
 * itself was ever seen, so the dependents of an owner that is gone (or never
 * existed) are still known.
 *
 * The graph decides nothing on its own: every change answers with the objects
 * the collector should look at again (`GraphEffects`); the collector then
 * reads the live state before it acts.
 */
import type { ResourceEntry } from '../resources/catalogue.js'
import { isPlainObject, type KubeObject, type OwnerReference } from '../machinery/object.js'
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER } from '../machinery/finalizers.js'
import { appendAll } from '../machinery/append-all.js'

export type { OwnerReference }

/** Where an object lives: enough to read, update or delete it through its store. */
export interface ObjectRef {
  entry: ResourceEntry
  namespace: string
  name: string
  uid: string
}

interface GraphNode {
  ref: ObjectRef
  owners: OwnerReference[]
  beingDeleted: boolean
  finalizers: string[]
}

/** What a change asks of the collector. */
export interface GraphEffects {
  /** Objects to check: collect them if their owners are gone, or finish their foreground deletion. */
  attemptToDelete: ObjectRef[]
  /** Owners deleted with the Orphan policy: free their dependents, then drop the `orphan` finalizer. */
  attemptToOrphan: ObjectRef[]
}

/** The well-formed owner references of an object (validation keeps the rest out; stored data may not agree). */
export function ownerReferencesOf(obj: KubeObject): OwnerReference[] {
  const refs = obj.metadata.ownerReferences
  if (!Array.isArray(refs)) return []
  return refs.filter(
    (r): r is OwnerReference =>
      isPlainObject(r) &&
      typeof r['uid'] === 'string' &&
      r['uid'] !== '' &&
      typeof r['kind'] === 'string' &&
      typeof r['name'] === 'string' &&
      typeof r['apiVersion'] === 'string',
  )
}

/** Marked for deletion and waiting for its dependents to go first. */
export function isDeletingDependents(obj: { beingDeleted: boolean; finalizers: readonly string[] }): boolean {
  return obj.beingDeleted && obj.finalizers.includes(FOREGROUND_FINALIZER)
}

function isOrphaning(node: GraphNode): boolean {
  return node.beingDeleted && node.finalizers.includes(ORPHAN_FINALIZER)
}

export class OwnerGraph {
  private readonly nodes = new Map<string, GraphNode>()
  private readonly dependentsByOwner = new Map<string, Set<string>>()

  /** Records the current state of an object (an ADDED or MODIFIED event, or an item of a list). */
  observe(ref: ObjectRef, obj: KubeObject): GraphEffects {
    const effects: GraphEffects = { attemptToDelete: [], attemptToOrphan: [] }
    const before = this.nodes.get(ref.uid)
    const node: GraphNode = {
      ref,
      owners: ownerReferencesOf(obj),
      beingDeleted: Boolean(obj.metadata.deletionTimestamp),
      finalizers: Array.isArray(obj.metadata.finalizers) ? [...obj.metadata.finalizers] : [],
    }
    this.nodes.set(ref.uid, node)

    const oldOwners = new Map((before?.owners ?? []).map((o) => [o.uid, o]))
    const newOwners = new Map(node.owners.map((o) => [o.uid, o]))
    for (const uid of oldOwners.keys()) if (!newOwners.has(uid)) this.unlink(uid, ref.uid)
    for (const uid of newOwners.keys()) this.link(uid, ref.uid)

    // An owner that is gone, unknown or being deleted: the new reference may already be dangling.
    const suspicious = node.owners.some((o) => {
      if (oldOwners.has(o.uid)) return false
      const owner = this.nodes.get(o.uid)
      return !owner || owner.beingDeleted
    })
    if (suspicious) effects.attemptToDelete.push(ref)

    // An owner waiting for its blocking dependents learns when one lets go of it.
    for (const [uid, old] of oldOwners) {
      const now = newOwners.get(uid)
      const released = !now || (old.blockOwnerDeletion === true && now.blockOwnerDeletion !== true)
      const owner = this.nodes.get(uid)
      if (released && owner && isDeletingDependents(owner)) effects.attemptToDelete.push(owner.ref)
    }

    if (isOrphaning(node) && !(before && isOrphaning(before))) effects.attemptToOrphan.push(ref)
    if (isDeletingDependents(node) && !(before && isDeletingDependents(before))) {
      effects.attemptToDelete.push(...this.dependents(ref.uid), ref)
    }
    return effects
  }

  /** Forgets an object that was deleted: its dependents may now be collectable, its owners may finish. */
  forget(uid: string): GraphEffects {
    const effects: GraphEffects = { attemptToDelete: [], attemptToOrphan: [] }
    const node = this.nodes.get(uid)
    if (!node) return effects
    this.nodes.delete(uid)
    for (const owner of node.owners) {
      this.unlink(owner.uid, uid)
      const ownerNode = this.nodes.get(owner.uid)
      if (ownerNode && isDeletingDependents(ownerNode)) effects.attemptToDelete.push(ownerNode.ref)
    }
    appendAll(effects.attemptToDelete, this.dependents(uid))
    return effects
  }

  has(uid: string): boolean {
    return this.nodes.has(uid)
  }

  /** Whether the last state seen of the object has its deletion under way. */
  isBeingDeleted(uid: string): boolean {
    return this.nodes.get(uid)?.beingDeleted === true
  }

  /** Whether the last state seen of the object has it waiting for its dependents. */
  isDeletingDependents(uid: string): boolean {
    const node = this.nodes.get(uid)
    return node !== undefined && isDeletingDependents(node)
  }

  /** The objects seen to reference `ownerUid`. */
  dependents(ownerUid: string): ObjectRef[] {
    return [...(this.dependentsByOwner.get(ownerUid) ?? [])].flatMap((uid) => {
      const node = this.nodes.get(uid)
      return node ? [node.ref] : []
    })
  }

  /** Dependents whose reference to `ownerUid` has blockOwnerDeletion: a foreground deletion waits for them. */
  blockingDependents(ownerUid: string): ObjectRef[] {
    return [...(this.dependentsByOwner.get(ownerUid) ?? [])].flatMap((uid) => {
      const node = this.nodes.get(uid)
      const blocks = node?.owners.some((o) => o.uid === ownerUid && o.blockOwnerDeletion === true)
      return node && blocks ? [node.ref] : []
    })
  }

  /** The uids of the objects of one resource seen so far (to find those gone while a watch was down). */
  uidsOf(entry: ResourceEntry): string[] {
    return [...this.nodes.values()].filter((n) => n.ref.entry === entry).map((n) => n.ref.uid)
  }

  private link(ownerUid: string, dependentUid: string): void {
    let set = this.dependentsByOwner.get(ownerUid)
    if (!set) this.dependentsByOwner.set(ownerUid, (set = new Set()))
    set.add(dependentUid)
  }

  private unlink(ownerUid: string, dependentUid: string): void {
    const set = this.dependentsByOwner.get(ownerUid)
    if (!set) return
    set.delete(dependentUid)
    if (set.size === 0) this.dependentsByOwner.delete(ownerUid)
  }
}
