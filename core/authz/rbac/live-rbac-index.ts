/**
 * The RBAC index kept current from the shared informers of the four kinds
 * (upstream's RBAC authorizer reads its listers). Started on first use, so
 * a server that never needs RBAC opens no watch.
 */
import type { InformerFactory } from '../../client/informer-factory.js'
import { followInformer, type InformerFollower } from '../../client/informer.js'
import type { ResourceEntry } from '../../resources/catalogue.js'
import { clusterRoleBindings, clusterRoles, roleBindings, roles } from '../../resources/groups/rbac.js'
import { RbacIndex, type RbacKind } from './rbac-index.js'

const KINDS: readonly (readonly [RbacKind, ResourceEntry])[] = [
  ['Role', roles],
  ['ClusterRole', clusterRoles],
  ['RoleBinding', roleBindings],
  ['ClusterRoleBinding', clusterRoleBindings],
]

export class LiveRbacIndex {
  readonly index = new RbacIndex()
  private started: Promise<void> | undefined
  private followers: InformerFollower[] = []

  constructor(private readonly informers: InformerFactory) {}

  /** Starts following the four kinds (once); resolves when each was listed once. */
  start(): Promise<void> {
    if (!this.started) {
      this.followers = KINDS.map(([kind, entry]) =>
        followInformer(this.informers.informer(entry), (event, object) => {
          if (event === 'delete') this.index.remove(kind, object)
          else this.index.put(kind, object)
        }),
      )
      this.started = Promise.all(this.followers.map((f) => f.ready)).then(() => {})
    }
    return this.started
  }

  stop(): void {
    for (const follower of this.followers) follower.stop()
  }
}
