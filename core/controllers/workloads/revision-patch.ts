/**
 * What a ControllerRevision of a DaemonSet or a StatefulSet holds: the pod
 * template as a patch that puts it back whole,
 * `{"spec":{"template":{..., "$patch":"replace"}}}`, written as upstream's
 * controllers write it. They encode the typed object (so the template's
 * metadata carries a zero `creationTimestamp` as null), decode that into a
 * map and marshal the map again, which sorts every object's keys; clients
 * compare those bytes (upstream's daemon.Match, which `kubectl rollout` and
 * the conformance specs use), and the revision's hash is taken over them.
 */
import type { KubeObject } from '../../machinery/object.js'

export interface PodTemplate {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string>; finalizers?: string[]; [field: string]: unknown }
  spec?: Record<string, unknown>
}

function goString(text: string): string {
  return JSON.stringify(text).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

const byGoKeyOrder = ([a]: [string, unknown], [b]: [string, unknown]): number => (a < b ? -1 : a > b ? 1 : 0)

/** A value as Go's json.Marshal writes a decoded `map[string]interface{}`: keys sorted at every level. */
export function goJson(value: unknown): string {
  if (value === null || value === undefined) return 'null'
  if (Array.isArray(value)) return `[${value.map(goJson).join(',')}]`
  if (typeof value === 'string') return goString(value)
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined)
    entries.sort(byGoKeyOrder)
    return `{${entries.map(([k, v]) => `${goString(k)}:${goJson(v)}`).join(',')}}`
  }
  return JSON.stringify(value)
}

/**
 * A copy of `value` whose objects list their keys in Go's sorted order, so
 * that it is served as upstream stores it (the server keeps a revision's
 * data in the order it was given). Keys that are array indices come first
 * in any JavaScript object whatever the order: such keys stay where
 * JavaScript puts them.
 */
function inGoKeyOrder(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(inGoKeyOrder)
  if (value === null || typeof value !== 'object') return value
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined)
  entries.sort(byGoKeyOrder)
  return Object.fromEntries(entries.map(([k, v]) => [k, inGoKeyOrder(v)]))
}

/** The patch a revision stores for `template`, its keys in Go's order. */
export function templatePatch(template: PodTemplate | undefined): Record<string, unknown> {
  const copy = structuredClone(template ?? {}) as Record<string, unknown>
  const metadata = (copy['metadata'] ?? {}) as Record<string, unknown>
  copy['metadata'] = { creationTimestamp: null, ...metadata }
  copy['$patch'] = 'replace'
  return inGoKeyOrder({ spec: { template: copy } }) as Record<string, unknown>
}

/** The template a revision restores (upstream's ApplyRevision, which only replaces the template). */
export function templateOf(revision: KubeObject): PodTemplate {
  const data = revision['data'] as { spec?: { template?: Record<string, unknown> } } | undefined
  const template = structuredClone(data?.spec?.template ?? {})
  delete template['$patch']
  const metadata = template['metadata'] as Record<string, unknown> | undefined
  if (metadata && metadata['creationTimestamp'] === null) delete metadata['creationTimestamp']
  return template as PodTemplate
}
