/** PodTemplates and ReplicationControllers, the core group's pod templates and their oldest controller. */
import { fieldLabelNotSupported } from '../field-labels.js'
import { type FieldError, fieldPath, invalid, required } from '../../machinery/field.js'
import { goStringMap } from '../../machinery/go-format.js'
import { nonNegative, templateLabels } from '../apps/selector.js'
import { objectAt, setIfAbsent, specOf, validateLongRunningTemplateInSteps } from '../apps/template.js'
import type { Checkpointed } from '../../machinery/time-slice.js'
import { validateReplicationControllerStatusUpdate } from '../apps/workload-status-rules.js'
import type { ResourceEntry, StrategyContext } from '../catalogue.js'
import { ageColumn, column, nameColumn, wideColumn } from '../columns/common.js'
import { containerCells, formatLabels } from '../columns/format.js'
import { at, int } from '../columns/values.js'
import { defineResource, scaleSubresource, statusSubresource } from '../define.js'
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import { applyPodSpecDefaultsInSteps } from './pod-spec-defaults.js'
import { validatePodTemplateSpecInSteps } from './pod-spec-validation.js'
import { appendAll, appendAllInSteps } from '../../machinery/append-all.js'

/** A PodTemplate's template: defaulted as any pod spec, and mutable, unlike a pod's. */
function* defaultTemplate(pt: KubeObject): Checkpointed<void> {
  // Upstream's template and its spec are structs, never absent: defaults fill an empty one.
  const template = isPlainObject(pt['template']) ? pt['template'] : (pt['template'] = {})
  const spec = isPlainObject(template['spec']) ? template['spec'] : (template['spec'] = {})
  yield* applyPodSpecDefaultsInSteps(spec)
}

function validateTemplate(pt: KubeObject, ctx: StrategyContext): Checkpointed<FieldError[]> {
  return validatePodTemplateSpecInSteps(pt['template'], fieldPath('template'), { allowPrivileged: ctx.allowPrivileged ?? false })
}

export const podTemplates: ResourceEntry = defineResource({
  group: '',
  version: 'v1',
  kind: 'PodTemplate',
  resource: 'podtemplates',
  namespaced: true,
  strategy: {
    applyDefaults: defaultTemplate,
    validate: validateTemplate,
    validateUpdate: (pt, _old, ctx) => validateTemplate(pt, ctx),
  },
  columns: [
    nameColumn,
    column('Containers', 'The containers of the template.', (pt) => containerCells(at(pt, 'template', 'spec')).names),
    column('Images', 'The images of those containers.', (pt) => containerCells(at(pt, 'template', 'spec')).images),
    column('Pod Labels', 'The labels the pods get.', (pt) => formatLabels(at(pt, 'template', 'metadata', 'labels'))),
  ],
})

/**
 * core/v1's defaults: a controller without a selector selects its template's
 * labels, and is labelled with them when it has no labels of its own.
 */
function* applyReplicationControllerDefaults(rc: KubeObject): Checkpointed<void> {
  const spec = specOf(rc)
  const labels = templateLabels(spec['template'])
  if (labels) {
    const selector = spec['selector']
    if (!isPlainObject(selector) || Object.keys(selector).length === 0) spec['selector'] = { ...labels }
    if (!rc.metadata.labels || Object.keys(rc.metadata.labels).length === 0) rc.metadata.labels = { ...labels }
  }
  setIfAbsent(spec, 'replicas', 1)
  // The template is optional in v1 (a pointer): only a given one gets defaults.
  if (isPlainObject(spec['template'])) yield* applyPodSpecDefaultsInSteps(objectAt(spec['template'], 'spec'))
}

/** upstream's ValidateReplicationControllerSpec: the selector is a plain label map that must pick the template's pods. */
function* validateReplicationController(rc: KubeObject, ctx: StrategyContext): Checkpointed<FieldError[]> {
  const spec = specOf(rc)
  const path = fieldPath('spec')
  const errs = nonNegative(spec['minReadySeconds'], path.child('minReadySeconds'))
  const selector = isPlainObject(spec['selector']) ? (spec['selector'] as Record<string, unknown>) : {}
  if (Object.keys(selector).length === 0) errs.push(required(path.child('selector')))
  appendAll(errs, nonNegative(spec['replicas'], path.child('replicas')))
  const template = spec['template']
  if (!isPlainObject(template)) return [...errs, required(path.child('template'))]
  const labels = templateLabels(template) ?? {}
  if (Object.entries(selector).some(([k, v]) => labels[k] !== v))
    errs.push(invalid(path.child('template').child('metadata').child('labels'), goStringMap(templateLabels(template)), '`selector` does not match template `labels`'))
  yield* appendAllInSteps(errs, yield* validateLongRunningTemplateInSteps(template, path.child('template'), 'ReplicationController', { allowPrivileged: ctx.allowPrivileged ?? false }))
  return errs
}

export const replicationControllers: ResourceEntry = defineResource({
  group: '',
  version: 'v1',
  kind: 'ReplicationController',
  resource: 'replicationcontrollers',
  namespaced: true,
  shortNames: ['rc'],
  categories: ['all'],
  subresources: [scaleSubresource, { ...statusSubresource('ReplicationController'), validateUpdate: validateReplicationControllerStatusUpdate }],
  tracksGeneration: true,
  storagePath: 'controllers',
  strategy: {
    // A v1 ReplicationController's pods outlive it unless the delete asks otherwise, as before the garbage collector.
    orphanDependentsByDefault: true,
    applyDefaults: applyReplicationControllerDefaults,
    // A new controller has counted no pods yet; replicas is always on the wire.
    prepareForCreate: (rc) => {
      rc['status'] = { replicas: 0 }
    },
    validate: validateReplicationController,
    validateUpdate: (rc, _old, ctx) => validateReplicationController(rc, ctx),
    fieldLabelRefusal: fieldLabelNotSupported,
    fieldSet: (rc) => ({ 'status.replicas': String(int(at(rc, 'status', 'replicas'))) }),
  },
  columns: [
    nameColumn,
    column('Desired', 'How many pods are wanted.', (rc) => int(at(rc, 'spec', 'replicas')), { type: 'integer' }),
    column('Current', 'How many pods exist.', (rc) => int(at(rc, 'status', 'replicas')), { type: 'integer' }),
    column('Ready', 'How many pods are ready.', (rc) => int(at(rc, 'status', 'readyReplicas')), { type: 'integer' }),
    ageColumn,
    wideColumn('Containers', 'The containers of the template.', (rc) => containerCells(at(rc, 'spec', 'template', 'spec')).names),
    wideColumn('Images', 'The images of those containers.', (rc) => containerCells(at(rc, 'spec', 'template', 'spec')).images),
    wideColumn('Selector', 'The pods it controls.', (rc) => formatLabels(at(rc, 'spec', 'selector'))),
  ],
})
