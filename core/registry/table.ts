/**
 * Server-side printing (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`):
 * the entry's columns, every cell filled as upstream's server does (kubectl
 * hides the wide ones); each row carries the object as PartialObjectMetadata
 * (or whole) so kubectl can show namespaces and labels.
 */
import { TimeSlice } from '../machinery/time-slice.js'
import type { ResourceEntry, RowBudget, TableColumn } from '../resources/catalogue.js'
import { DEFAULT_COLUMNS } from '../resources/columns/common.js'
import type { KubeObject, ListMeta } from '../machinery/object.js'
import { partialObjectMetadata } from './partial-metadata.js'

export type IncludeObject = 'None' | 'Metadata' | 'Object'

/** The entry's columns, or upstream's default table (NAME, CREATED AT) for kinds without a printer. */
function columnsOf(entry: ResourceEntry): readonly TableColumn[] {
  return entry.columns.length > 0 ? entry.columns : DEFAULT_COLUMNS
}

function columnDefinition(c: TableColumn) {
  return { name: c.name, type: c.type, format: c.format ?? '', description: c.description, priority: c.priority }
}

export function columnDefinitions(entry: ResourceEntry) {
  return columnsOf(entry).map(columnDefinition)
}

function rowObject(obj: KubeObject, include: IncludeObject): KubeObject | undefined {
  if (include === 'None') return undefined
  return include === 'Object' ? obj : partialObjectMetadata(obj)
}

export function tableRow(entry: ResourceEntry, obj: KubeObject, include: IncludeObject, now: Date) {
  // One budget for the row: each column's path alone is bounded, but a definition may have hundreds of them.
  const row: RowBudget = { spent: 0 }
  const cells = columnsOf(entry).map((c) => c.cell(obj, now, row))
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

/**
 * toTable for a list: rows filled in time slices, so that a list of many
 * objects, or columns whose paths step through much of each object, leaves
 * other requests served meanwhile.
 */
export async function toTableInSlices(entry: ResourceEntry, objects: KubeObject[], meta: ListMeta, include: IncludeObject, now: Date) {
  const slice = new TimeSlice()
  const rows: Array<ReturnType<typeof tableRow>> = []
  for (const o of objects) {
    rows.push(tableRow(entry, o, include, now))
    await slice.pause()
  }
  return { kind: 'Table', apiVersion: 'meta.k8s.io/v1', metadata: meta, columnDefinitions: columnDefinitions(entry), rows }
}
