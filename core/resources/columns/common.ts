/**
 * The columns every table shares and the builder the entries use for the
 * rest. Upstream puts AGE where each kind's printer says (pods: before the
 * wide columns; CSRs: second), so entries list NAME and AGE explicitly.
 */
import { age } from '../../machinery/human-duration.js'
import type { TableColumn } from '../catalogue.js'
import type { KubeObject } from '../../machinery/object.js'

type ColumnType = TableColumn['type']

export interface ColumnOptions {
  type?: ColumnType
  format?: string
  /** 1: shown only with `-o wide`. */
  priority?: number
}

export function column(
  name: string,
  description: string,
  cell: (obj: KubeObject, now: Date) => unknown,
  options: ColumnOptions = {},
): TableColumn {
  const c: TableColumn = { name, type: options.type ?? 'string', description, priority: options.priority ?? 0, cell }
  if (options.format) c.format = options.format
  return c
}

/** A column shown only with `-o wide`. */
export function wideColumn(
  name: string,
  description: string,
  cell: (obj: KubeObject, now: Date) => unknown,
  options: Omit<ColumnOptions, 'priority'> = {},
): TableColumn {
  return column(name, description, cell, { ...options, priority: 1 })
}

export const nameColumn: TableColumn = column(
  'Name',
  'Name must be unique within a namespace. Cannot be updated. Reused by generateName when unset.',
  (obj) => obj.metadata.name ?? '',
  { format: 'name' },
)

export const ageColumn: TableColumn = column(
  'Age',
  'When the object was created, as a time since then.',
  (obj, now) => age(obj.metadata.creationTimestamp, now),
)

/** Upstream's table for kinds without a printer of their own (roles, limit ranges, CRDs). */
export const DEFAULT_COLUMNS: readonly TableColumn[] = [
  nameColumn,
  column('Created At', 'When the object was created.', (obj) => obj.metadata.creationTimestamp ?? '', {
    type: 'date',
  }),
]
