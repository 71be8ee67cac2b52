/**
 * The RBAC index kept current from storage: each of the four kinds is
 * listed, then watched from the list's revision; a watch that ends or fails
 * is followed by a fresh list (with a growing pause), as an informer does.
 * Started on first use, so a server that never needs RBAC opens no watch.
 */
import type { Logger } from '../../logging/logger.js'
import type { Registry } from '../../registry/registry.js'
import type { ResourceEntry } from '../../resources/catalogue.js'
import { clusterRoleBindings, clusterRoles, roleBindings, roles } from '../../resources/groups/rbac.js'
import type { Watcher } from '../../storage/interface.js'
import { RbacIndex, type RbacKind } from './rbac-index.js'

const KINDS: readonly (readonly [RbacKind, ResourceEntry])[] = [
  ['Role', roles],
  ['ClusterRole', clusterRoles],
  ['RoleBinding', roleBindings],
  ['ClusterRoleBinding', clusterRoleBindings],
]

const FIRST_RETRY_MS = 100
const MAX_RETRY_MS = 30_000

export class LiveRbacIndex {
  readonly index = new RbacIndex()
  private started: Promise<void> | undefined
  private stopped = false
  private readonly watchers = new Set<Watcher>()
  private readonly pauses = new Set<() => void>()

  constructor(
    private readonly registry: Registry,
    private readonly logger: Logger,
  ) {}

  /** Starts following the four kinds (once); resolves when each was listed once. */
  start(): Promise<void> {
    this.started ??= Promise.all(KINDS.map(([kind, entry]) => new Promise<void>((loaded) => void this.follow(kind, entry, loaded)))).then(() => {})
    return this.started
  }

  stop(): void {
    this.stopped = true
    for (const watcher of [...this.watchers]) watcher.stop()
    for (const wake of [...this.pauses]) wake()
  }

  private async follow(kind: RbacKind, entry: ResourceEntry, loaded: () => void): Promise<void> {
    const store = this.registry.store(entry)
    const prefix = store.prefix('')
    let delay = FIRST_RETRY_MS
    while (!this.stopped) {
      try {
        const list = await store.storage.list(prefix)
        if (this.stopped) break
        this.index.replace(kind, list.items)
        loaded()
        const watcher = store.storage.watch(prefix, { resourceVersion: String(list.revision) })
        this.watchers.add(watcher)
        try {
          for await (const event of watcher) {
            if (event.type === 'BOOKMARK') continue
            if (event.type === 'DELETED') this.index.remove(kind, event.object)
            else this.index.put(kind, event.object)
            delay = FIRST_RETRY_MS
          }
        } finally {
          this.watchers.delete(watcher)
        }
      } catch (err) {
        if (this.stopped) break
        this.logger.warn({ prefix, err: String(err) }, 'RBAC watch failed; listing again')
      }
      if (this.stopped) break
      await this.sleep(delay)
      delay = Math.min(delay * 2, MAX_RETRY_MS)
    }
    // A server stopped before the first list answers nothing more; let whoever waits go on.
    loaded()
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer)
        this.pauses.delete(wake)
        resolve()
      }
      const timer = setTimeout(wake, ms)
      ;(timer as { unref?: () => void }).unref?.()
      this.pauses.add(wake)
    })
  }
}
