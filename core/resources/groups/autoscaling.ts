/**
 * autoscaling: HorizontalPodAutoscalers, served as v2 (preferred, the
 * stored form) and v1 (converted, see conversion/hpa-v1.ts). Each version
 * fills its own defaults; the rules (autoscaling/hpa-rules.ts) are checked
 * on the v2 form, as upstream checks its internal form, so a v1 client
 * meets v2 field paths too.
 */
import type { ResourceEntry, TableColumn } from '../catalogue.js'
import { ageColumn, column, nameColumn } from '../columns/common.js'
import { at, int, list, quantity, text } from '../columns/values.js'
import { applyHpaV1Defaults, applyHpaV2Defaults } from '../autoscaling/hpa-defaults.js'
import { clearStatus, validateHorizontalPodAutoscaler } from '../autoscaling/hpa-rules.js'
import { validateHpaStatusUpdate } from '../autoscaling/hpa-status-rules.js'
import { hpaV1Conversion, hpaV1ToV2 } from '../conversion/hpa-v1.js'
import { defineResource, statusSubresource } from '../define.js'
import type { KubeObject } from '../../machinery/object.js'

const MAX_SHOWN_METRICS = 2

function percent(v: unknown): string | undefined {
  return typeof v === 'number' ? `${v}%` : undefined
}

/** A quantity cell: a zero quantity prints as 0. */
function amount(v: unknown): string {
  return quantity(v) || '0'
}

/** One metric as `current/target`, as upstream's formatHPAMetrics words each source type. */
function formatMetric(spec: unknown, status: unknown): string {
  const type = text(at(spec, 'type'))
  const source = type ? type.charAt(0).toLowerCase() + type.slice(1) : ''
  const target = at(spec, source, 'target')
  const current = at(status, source, 'current')
  switch (type) {
    case 'External':
    case 'Object': {
      if (at(target, 'averageValue') !== undefined) {
        const now = at(current, 'averageValue') !== undefined ? amount(at(current, 'averageValue')) : '<unknown>'
        return `${now}/${amount(at(target, 'averageValue'))} (avg)`
      }
      return `${status !== undefined ? amount(at(current, 'value')) : '<unknown>'}/${amount(at(target, 'value'))}`
    }
    case 'Pods':
      return `${status !== undefined ? amount(at(current, 'averageValue')) : '<unknown>'}/${amount(at(target, 'averageValue'))}`
    case 'Resource':
    case 'ContainerResource': {
      const name = text(at(spec, source, 'name'))
      if (at(target, 'averageValue') !== undefined) {
        const now = status !== undefined ? amount(at(current, 'averageValue')) : '<unknown>'
        return `${name}: ${now}/${amount(at(target, 'averageValue'))}`
      }
      const now = percent(at(current, 'averageUtilization')) ?? '<unknown>'
      return `${name}: ${now}/${percent(at(target, 'averageUtilization')) ?? '<auto>'}`
    }
    default:
      return '<unknown type>'
  }
}

function formatMetrics(hpa: KubeObject): string {
  const specs = list(at(hpa, 'spec', 'metrics'))
  if (specs.length === 0) return '<none>'
  const statuses = list(at(hpa, 'status', 'currentMetrics'))
  // A status counts only when it reports on the same source type, as upstream checks per type.
  const shown = specs.map((spec, i) => {
    const status = statuses[i]
    return formatMetric(spec, text(at(status, 'type')) === text(at(spec, 'type')) ? status : undefined)
  })
  if (shown.length <= MAX_SHOWN_METRICS) return shown.join(', ')
  return `${shown.slice(0, MAX_SHOWN_METRICS).join(', ')} + ${shown.length - MAX_SHOWN_METRICS} more...`
}

/** The columns, computed on the v2 form. */
const hpaColumns: TableColumn[] = [
  nameColumn,
  column('Reference', 'The object it scales.', (hpa) => `${text(at(hpa, 'spec', 'scaleTargetRef', 'kind'))}/${text(at(hpa, 'spec', 'scaleTargetRef', 'name'))}`),
  column('Targets', 'Current and target values of its metrics.', formatMetrics),
  column('MinPods', 'The fewest replicas it scales to.', (hpa) => {
    const min = at(hpa, 'spec', 'minReplicas')
    return typeof min === 'number' ? String(min) : '<unset>'
  }),
  column('MaxPods', 'The most replicas it scales to.', (hpa) => int(at(hpa, 'spec', 'maxReplicas'))),
  column('Replicas', 'The replicas it last saw.', (hpa) => int(at(hpa, 'status', 'currentReplicas'))),
  ageColumn,
]

const common = {
  group: 'autoscaling',
  kind: 'HorizontalPodAutoscaler',
  resource: 'horizontalpodautoscalers',
  namespaced: true,
  shortNames: ['hpa'],
  categories: ['all'],
  // autoscalerStatusStrategy: only the status is checked.
  subresources: [{ ...statusSubresource('HorizontalPodAutoscaler'), validateUpdate: validateHpaStatusUpdate }],
}

export const horizontalPodAutoscalersV2: ResourceEntry = defineResource({
  ...common,
  version: 'v2',
  strategy: {
    applyDefaults: applyHpaV2Defaults,
    prepareForCreate: clearStatus,
    validate: (hpa) => validateHorizontalPodAutoscaler(hpa),
    validateUpdate: validateHorizontalPodAutoscaler,
  },
  columns: hpaColumns,
})

export const horizontalPodAutoscalersV1: ResourceEntry = defineResource({
  ...common,
  version: 'v1',
  conversion: hpaV1Conversion,
  strategy: {
    applyDefaults: applyHpaV1Defaults,
    prepareForCreate: clearStatus,
    validate: (hpa) => validateHorizontalPodAutoscaler(hpaV1ToV2(hpa)),
    validateUpdate: (hpa, old) => validateHorizontalPodAutoscaler(hpaV1ToV2(hpa), hpaV1ToV2(old)),
  },
  columns: hpaColumns.map((c) => ({ ...c, cell: (obj, now, row) => c.cell(hpaV1Conversion.toStorage(obj), now, row) })),
})

/** v2 first: the preferred version, as upstream's discovery lists it. */
export const autoscalingEntries: ResourceEntry[] = [horizontalPodAutoscalersV2, horizontalPodAutoscalersV1]
