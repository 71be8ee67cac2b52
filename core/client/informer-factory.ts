/**
 * The server's one informer per resource (upstream's SharedInformerFactory):
 * asked by group and resource, made on first use, shared by every component
 * that asks, and stopped together at shutdown. A custom resource's informer
 * reads wherever its definition stores it, so it is looked up by name, not
 * by the catalogue entry of the moment.
 */
import type { Logger } from '../logging/logger.js'
import type { ListWatch } from './list-watch.js'
import { SharedInformer } from './informer.js'

/** The group and plural name that identify a resource (its version does not matter to its objects). */
export interface GroupResourceRef {
  readonly group: string
  readonly resource: string
}

export class InformerFactory {
  private readonly informers = new Map<string, SharedInformer>()
  private stopped = false

  constructor(
    private readonly sourceFor: (resource: GroupResourceRef) => ListWatch,
    private readonly logger: Logger,
  ) {}

  /** The resource's informer, started on first use. */
  informer(resource: GroupResourceRef): SharedInformer {
    const name = resource.group ? `${resource.resource}.${resource.group}` : resource.resource
    let informer = this.informers.get(name)
    if (!informer) {
      informer = new SharedInformer(this.sourceFor(resource), this.logger, name)
      // One asked for after shutdown answers what it lists once and never watches.
      if (this.stopped) informer.stop()
      this.informers.set(name, informer)
    }
    return informer
  }

  /** Resolves when every informer asked for so far has its first list: upstream's WaitForCacheSync. */
  async synced(): Promise<void> {
    await Promise.all([...this.informers.values()].map((i) => i.ready))
  }

  stop(): void {
    this.stopped = true
    for (const informer of this.informers.values()) informer.stop()
  }
}
