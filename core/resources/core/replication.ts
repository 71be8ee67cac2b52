/** PodTemplates and ReplicationControllers, the core group's pod templates and their oldest controller. */
import { fieldPath } from '../../validation/field.js'
import type { ResourceEntry, StrategyContext } from '../catalogue.js'
import { ageColumn, column, nameColumn, wideColumn } from '../columns/common.js'
import { containerCells, formatLabels } from '../columns/format.js'
import { at, int } from '../columns/values.js'
import { defineResource, scaleSubresource, statusSubresource } from '../define.js'
import { isPlainObject, type KubeObject } from '../object.js'
import { applyPodSpecDefaults } from './pod-spec-defaults.js'
import { validatePodTemplateSpec } from './pod-spec-validation.js'

/** A PodTemplate's template: defaulted as any pod spec, and mutable, unlike a pod's. */
function defaultTemplate(pt: KubeObject): void {
  // Upstream's template and its spec are structs, never absent: defaults fill an empty one.
  const template = isPlainObject(pt['template']) ? pt['template'] : (pt['template'] = {})
  const spec = isPlainObject(template['spec']) ? template['spec'] : (template['spec'] = {})
  applyPodSpecDefaults(spec)
}

function validateTemplate(pt: KubeObject, ctx: StrategyContext) {
  return validatePodTemplateSpec(pt['template'], fieldPath('template'), { allowPrivileged: ctx.allowPrivileged ?? false })
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

export const replicationControllers: ResourceEntry = defineResource({
  group: '',
  version: 'v1',
  kind: 'ReplicationController',
  resource: 'replicationcontrollers',
  namespaced: true,
  shortNames: ['rc'],
  categories: ['all'],
  subresources: [scaleSubresource, statusSubresource('ReplicationController')],
  tracksGeneration: true,
  storagePath: 'controllers',
  strategy: {
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
