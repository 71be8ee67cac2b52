/**
 * Cell formats several kinds share, as upstream's printers write them:
 * labels and selectors, container names and images, short lists with
 * "+ N more...", booleans.
 */
import { at, list, record, text } from './values.js'

/** `a=b,c=d` in key order, `<none>` when empty (upstream's labels.FormatLabels). */
export function formatLabels(labels: unknown): string {
  const entries = Object.entries(record(labels)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  if (entries.length === 0) return '<none>'
  return entries.map(([k, v]) => `${k}=${text(v)}`).join(',')
}

/**
 * A LabelSelector as selector text (`app=web,tier in (a,b),!legacy`),
 * requirements in key order; empty when it selects everything or is unset.
 */
export function labelSelectorText(selector: unknown): string {
  const requirements: [key: string, text: string][] = []
  for (const [k, v] of Object.entries(record(at(selector, 'matchLabels')))) requirements.push([k, `${k}=${text(v)}`])
  for (const e of list(at(selector, 'matchExpressions'))) {
    const key = text(at(e, 'key'))
    const values = list(at(e, 'values')).map(text).sort()
    switch (text(at(e, 'operator'))) {
      case 'In':
        requirements.push([key, `${key} in (${values.join(',')})`])
        break
      case 'NotIn':
        requirements.push([key, `${key} notin (${values.join(',')})`])
        break
      case 'Exists':
        requirements.push([key, key])
        break
      case 'DoesNotExist':
        requirements.push([key, `!${key}`])
        break
      default:
        return '<error>'
    }
  }
  requirements.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return requirements.map(([, t]) => t).join(',')
}

/** A LabelSelector cell: its text, `<none>` when empty (upstream's FormatLabelSelector). */
export function formatLabelSelector(selector: unknown): string {
  return labelSelectorText(selector) || '<none>'
}

/** The CONTAINERS and IMAGES cells of a pod template: names and images, comma-separated. */
export function containerCells(podSpec: unknown): { names: string; images: string } {
  const containers = list(at(podSpec, 'containers'))
  return {
    names: containers.map((c) => text(at(c, 'name'))).join(','),
    images: containers.map((c) => text(at(c, 'image'))).join(','),
  }
}

/** At most `max` items, then ` + N more...`; `<unset>` when there are none. */
export function listWithMore(items: string[], max = 3): string {
  const shown = items.slice(0, max).join(',')
  if (items.length > max) return `${shown} + ${items.length - max} more...`
  return shown || '<unset>'
}

export function printBool(value: unknown): string {
  if (typeof value !== 'boolean') return '<unset>'
  return value ? 'True' : 'False'
}

/** `Kind/name` of an object reference, or `kind.group/name` when asked for the group. */
export function lowerKindName(kind: string, name: string): string {
  return name ? `${kind.toLowerCase()}/${name}` : kind.toLowerCase()
}
