/**
 * What the controllers that keep pods from a template share (upstream's
 * GetPodFromTemplate and slowStartBatch): the pod an owner's template
 * makes, and creating many in batches of 1, 2, 4 ... so that a refused
 * create (a quota) stops after one try, not hundreds.
 */
import type { KubeObject } from '../../machinery/object.js'
import { controllerRefTo } from './owned.js'

export interface PodTemplate {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string>; finalizers?: string[] }
  spec?: unknown
}

/** The pod `owner`'s template makes, named after the owner and controlled by it; `spec` replaces the template's when given. */
export function podFromTemplate(owner: KubeObject, template: PodTemplate, spec: unknown = template.spec): KubeObject {
  const meta = template.metadata ?? {}
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `${owner.metadata.name}-`,
      namespace: owner.metadata.namespace ?? '',
      ...(meta.labels ? { labels: { ...meta.labels } } : {}),
      ...(meta.annotations ? { annotations: { ...meta.annotations } } : {}),
      ...(meta.finalizers ? { finalizers: [...meta.finalizers] } : {}),
      ownerReferences: [controllerRefTo(owner)],
    },
    spec,
  }
}

/**
 * Runs `create` for each of `items` in batches of 1, 2, 4 ...; stops after
 * the first batch with a failure (a create answers its error, or undefined).
 * Resolves to the first error and how many items were never tried.
 */
export async function slowStart<T, E>(items: readonly T[], create: (item: T) => Promise<E | undefined>): Promise<{ error: E | undefined; skipped: number }> {
  let made = 0
  for (let batch = 1; made < items.length; batch *= 2) {
    const group = items.slice(made, made + batch)
    made += group.length
    const errors = (await Promise.all(group.map(create))).filter((e) => e !== undefined)
    if (errors.length) return { error: errors[0], skipped: items.length - made }
  }
  return { error: undefined, skipped: 0 }
}
