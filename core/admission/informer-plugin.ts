/**
 * A plugin built over one resource's shared informer: it decides from the
 * informer's objects, and is ready (upstream's WaitForReady) once the
 * informer has listed. The server stops the informers, not the plugin.
 */
import type { InformerFactory, GroupVersionResource } from '../client/informer-factory.js'
import type { SharedInformer } from '../client/informer.js'

export function withInformer<P>(informers: InformerFactory, resource: GroupVersionResource, build: (informer: SharedInformer) => P): { plugin: P; ready: Promise<void> } {
  const informer = informers.informer(resource)
  return { plugin: build(informer), ready: informer.ready }
}
