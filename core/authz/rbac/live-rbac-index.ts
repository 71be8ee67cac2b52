/**
 * The RBAC index kept current from the shared informers of the four kinds
 * (upstream's RBAC authorizer reads its listers). Started on first use, so
 * a server that never needs RBAC opens no watch.
 */
import type { GroupVersionResource, InformerFactory } from '../../client/informer-factory.js'
import { followInformer, type InformerFollower } from '../../client/informer.js'
import { RbacIndex, type RbacKind } from './rbac-index.js'

const rbacV1 = (resource: string): GroupVersionResource => ({ group: 'rbac.authorization.k8s.io', version: 'v1', resource })

const KINDS: readonly (readonly [RbacKind, GroupVersionResource])[] = [
  ['Role', rbacV1('roles')],
  ['ClusterRole', rbacV1('clusterroles')],
  ['RoleBinding', rbacV1('rolebindings')],
  ['ClusterRoleBinding', rbacV1('clusterrolebindings')],
]

export class LiveRbacIndex {
  readonly index = new RbacIndex()
  private started: Promise<void> | undefined
  private followers: InformerFollower[] = []

  constructor(private readonly informers: InformerFactory) {}

  /** Starts following the four kinds (once); resolves when each was listed once. */
  start(): Promise<void> {
    if (!this.started) {
      this.followers = KINDS.map(([kind, resource]) =>
        followInformer(this.informers.informer(resource), (event, object) => {
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
