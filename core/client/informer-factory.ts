/**
 * The server's one informer per resource version (upstream's
 * SharedInformerFactory, keyed by group, version and resource as upstream's
 * is): made on first use, shared by every component that asks, and stopped
 * together at shutdown. A version stored in another version's form is read
 * converted to the version asked for. A custom resource's informer reads
 * wherever its definition serves it now, so it is looked up by name, not by
 * the catalogue entry of the moment.
 */
import type { Logger } from '../logging/logger.js'
import type { ListWatch } from './list-watch.js'
import { SharedInformer } from './informer.js'

/** The group, version and plural name that identify a resource's objects in one form (a catalogue entry is one). */
export interface GroupVersionResource {
  readonly group: string
  readonly version: string
  readonly resource: string
}

export class InformerFactory {
  private readonly informers = new Map<string, SharedInformer>()
  private stopped = false

  constructor(
    private readonly sourceFor: (resource: GroupVersionResource) => ListWatch,
    private readonly logger: Logger,
  ) {}

  /** The resource's informer, started on first use. */
  informer(resource: GroupVersionResource): SharedInformer {
    const name = [resource.resource, resource.version, resource.group].filter(Boolean).join('.')
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
