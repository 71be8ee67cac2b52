/**
 * Server-side printing (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`):
 * NAME, the entry's columns, AGE; each row carries the object as
 * PartialObjectMetadata (or whole) so kubectl can show namespaces and labels.
 */
import type { ResourceEntry, TableColumn } from '../resources/catalogue.js'
import type { KubeObject, ListMeta } from '../resources/object.js'
import { age } from './human-duration.js'

export type IncludeObject = 'None' | 'Metadata' | 'Object'

const NAME_COLUMN = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description:
    'Name must be unique within a namespace. Cannot be updated. Reused by generateName when unset.',
  priority: 0,
}

const AGE_COLUMN = {
  name: 'Age',
  type: 'string',
  format: '',
  description: 'When the object was created, as a time since then.',
  priority: 0,
}

function columnDefinition(c: TableColumn) {
  return { name: c.name, type: c.type, format: c.format ?? '', description: c.description, priority: c.priority }
}

export function columnDefinitions(entry: ResourceEntry) {
  return [NAME_COLUMN, ...entry.columns.map(columnDefinition), AGE_COLUMN]
}

function rowObject(obj: KubeObject, include: IncludeObject): KubeObject | undefined {
  if (include === 'None') return undefined
  if (include === 'Object') return obj
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata }
}

export function tableRow(entry: ResourceEntry, obj: KubeObject, include: IncludeObject, now: Date) {
  const cells = [obj.metadata.name ?? '', ...entry.columns.map((c) => c.cell(obj, now)), age(obj.metadata.creationTimestamp, now)]
  const object = rowObject(obj, include)
  return object ? { cells, object } : { cells }
}

export function toTable(
  entry: ResourceEntry,
  objects: KubeObject[],
  meta: ListMeta,
  include: IncludeObject,
  now: Date,
  withColumns = true,
) {
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: meta,
    ...(withColumns ? { columnDefinitions: columnDefinitions(entry) } : {}),
    rows: objects.map((o) => tableRow(entry, o, include, now)),
  }
}
