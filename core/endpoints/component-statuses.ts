/**
 * `componentstatuses`: computed on each read, never stored, as upstream's
 * componentstatus REST does. Each component the runtime names (upstream:
 * the controller manager's and the scheduler's `/healthz` on this host, and
 * each etcd cluster) is checked when asked, all at once, and reported as a
 * `Healthy` condition.
 */
import type { OutputFormat } from '../http/media-types.js'
import { listResponse, objectResponse } from '../http/respond.js'
import type { KubeObject } from '../machinery/object.js'
import { internalError } from '../machinery/status-error.js'
import type { ResourceEntry } from '../resources/catalogue.js'
import type { ComponentHealth, ComponentProbe } from '../resources/core/cluster-info.js'
import { type ListQuery, selectorPredicate } from '../registry/list-query.js'
import { toTableInSlices } from '../registry/table.js'

async function componentStatus(probe: ComponentProbe): Promise<KubeObject> {
  const health = await probe.check().catch((err: unknown): ComponentHealth => ({ status: 'Unknown', message: '', error: String(err) }))
  const condition: Record<string, unknown> = { type: 'Healthy', status: health.status }
  // Go's omitempty: an empty message or error is left out.
  if (health.message) condition['message'] = health.message
  if (health.error) condition['error'] = health.error
  return { kind: 'ComponentStatus', apiVersion: 'v1', metadata: { name: probe.name }, conditions: [condition] }
}

/** GET of one component: an unknown name is upstream's plain error, a 500. */
export async function getComponentStatus(probes: readonly ComponentProbe[], name: string): Promise<KubeObject> {
  const probe = probes.find((p) => p.name === name)
  if (!probe) throw internalError(`Component not found: ${name}`)
  return componentStatus(probe)
}

/** LIST: every component checked at once; selectors filter as they would stored objects. */
export async function listComponentStatuses(
  entry: ResourceEntry,
  probes: readonly ComponentProbe[],
  query: ListQuery,
  format: OutputFormat,
  now: Date,
): Promise<Response> {
  const selects = selectorPredicate(entry, query) ?? (() => true)
  const items = (await Promise.all(probes.map(componentStatus))).filter(selects)
  if (format.kind === 'table') return objectResponse(await toTableInSlices(entry, items, {}, format.includeObject, now), { kind: 'json' })
  return listResponse({ kind: 'ComponentStatusList', apiVersion: 'v1', metadata: {}, items }, format)
}
