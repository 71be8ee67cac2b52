/** A valid CustomResourceDefinition to start from, and the create and update pipelines a user's write goes through. */
import type { StrategyContext } from '../../../../core/resources/catalogue.js'
import type { KubeObject } from '../../../../core/machinery/object.js'
import { customResourceDefinitionStrategy as strategy } from '../../../../core/resources/apiextensions/strategy.js'
import { errorText } from '../../../../core/machinery/field.js'
import { valueAtOnce } from '../../../../core/machinery/time-slice.js'

export const ctx: StrategyContext = { user: { username: 'admin', groups: [] }, now: new Date('2025-03-01T10:00:00Z') }

export const SCHEMA = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        cronSpec: { type: 'string' },
        image: { type: 'string' },
        replicas: { type: 'integer' },
        color: { type: 'string', enum: ['red', 'blue'] },
        tags: { type: 'array', items: { type: 'string' } },
      },
    },
    status: { type: 'object', properties: { replicas: { type: 'integer' }, selector: { type: 'string' } } },
  },
}

export function version(name: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return { name, served: true, storage: true, schema: { openAPIV3Schema: structuredClone(SCHEMA) }, ...fields }
}

/** crontabs.stable.example.com, one version v1; `spec` fields replace the defaults given here. */
export function crd(spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'crontabs.stable.example.com', ...metadata },
    spec: {
      group: 'stable.example.com',
      names: { plural: 'crontabs', singular: 'crontab', kind: 'CronTab', shortNames: ['ct'] },
      scope: 'Namespaced',
      versions: [version('v1')],
      ...spec,
    },
  }
}

/** What a create stores (or the problems it answers with), as the registry runs the hooks. */
export function create(obj: KubeObject): { stored: KubeObject; problems: string[] } {
  const stored = structuredClone(obj)
  strategy.normalize?.(stored)
  valueAtOnce(strategy.applyDefaults?.(stored))
  valueAtOnce(strategy.prepareForCreate?.(stored, ctx))
  return { stored, problems: valueAtOnce(strategy.validate?.(stored, ctx) ?? []).map(errorText) }
}

export const problemsOnCreate = (obj: KubeObject): string[] => create(obj).problems

/** An update through the main resource of `old` (as stored) to `next`. */
export function update(next: KubeObject, old: KubeObject): { stored: KubeObject; problems: string[] } {
  const stored = structuredClone(next)
  strategy.normalize?.(stored)
  valueAtOnce(strategy.applyDefaults?.(stored))
  strategy.prepareForUpdate?.(stored, old, ctx)
  return { stored, problems: valueAtOnce(strategy.validateUpdate?.(stored, old, ctx) ?? []).map(errorText) }
}
