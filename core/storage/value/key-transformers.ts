/**
 * The transformer of each stored key, for backends that hold many
 * resources' keys: the storage factory tells it which resource each key
 * prefix holds (it is asked for every stored resource, custom ones too),
 * and a backend asks for the key it reads or writes. A key under no known
 * prefix, or with no rule for its resource, goes through `fallback`.
 */
import type { HealthCheck } from '../../lifecycle/health-check.js'
import type { StorageResource } from '../factory.js'
import type { ValueTransformer } from './transformer.js'

export type TransformerResolver = (resource: Pick<StorageResource, 'group' | 'resource'>) => ValueTransformer

export class KeyTransformers {
  private readonly resources = new Map<string, Pick<StorageResource, 'group' | 'resource'>>()
  private readonly byPrefix = new Map<string, ValueTransformer>()

  constructor(private resolve: TransformerResolver) {}

  /** The first resource registered for a prefix keeps it (events of two groups share one prefix). */
  register(resource: StorageResource): void {
    if (this.resources.has(resource.prefix)) return
    this.resources.set(resource.prefix, { group: resource.group, resource: resource.resource })
    this.byPrefix.set(resource.prefix, this.resolve(resource))
  }

  /** Puts another configuration in effect for every key from now on (a reloaded file). */
  replace(resolve: TransformerResolver): void {
    this.resolve = resolve
    for (const [prefix, resource] of this.resources) this.byPrefix.set(prefix, resolve(resource))
  }

  /**
   * Whether a resource's values may be stored through something other than
   * identity, so that a rewrite after a rotation has to look at them. Without
   * more knowledge of the transformers: every resource.
   */
  covers(_resource: Pick<StorageResource, 'group' | 'resource'>): boolean {
    return true
  }

  /** Checks of what the transformers depend on (KMS plugins), served under /healthz, /livez and /readyz. */
  healthChecks(): readonly HealthCheck[] {
    return []
  }

  /** Lets go of what the transformers hold (KMS plugin connections, polling). */
  close(): void {}

  private readonly reloadListeners: ((ok: boolean) => void)[] = []

  /** Hears each attempt to reload the configuration behind the transformers (the automatic reload's metrics). */
  onReload(listener: (ok: boolean) => void): void {
    this.reloadListeners.push(listener)
  }

  /** Tells the listeners how an attempt to reload went: a file that did not load counts as a failure too. */
  reportReload(ok: boolean): void {
    for (const listener of this.reloadListeners) listener(ok)
  }

  /** The transformer of `key`: that of the longest registered prefix it starts with. */
  forKey(key: string): ValueTransformer {
    for (let end = key.lastIndexOf('/', key.length - 2); end > 0; end = key.lastIndexOf('/', end - 1)) {
      const transformer = this.byPrefix.get(key.slice(0, end + 1))
      if (transformer) return transformer
    }
    return this.resolve({ group: '', resource: '' })
  }
}
