/**
 * The table of a custom resource, as upstream's CR table convertor builds
 * it: NAME, then the version's additionalPrinterColumns, each cell the first
 * result of the column's JSONPath. A version without columns gets upstream's
 * logical default, one AGE column over metadata.creationTimestamp.
 */
import { daysInMonth } from '../machinery/civil-time.js'
import { humanDuration } from '../machinery/human-duration.js'
import type { CustomResourceColumnDefinition } from '../resources/apiextensions/types.js'
import type { RowBudget, TableColumn } from '../resources/catalogue.js'
import { nameColumn } from '../resources/columns/common.js'
import type { KubeObject } from '../machinery/object.js'
import { goPrintWithin, sortedKeysOnce } from '../machinery/go-format.js'
import { compileJsonPath, JsonPathError } from './jsonpath.js'

/** Served when a version lists no columns of its own. */
const DEFAULT_COLUMNS: readonly CustomResourceColumnDefinition[] = [
  {
    name: 'Age',
    type: 'date',
    description: 'When the object was created: a timestamp in RFC 3339 form, in UTC.',
    jsonPath: '.metadata.creationTimestamp',
  },
]

/** metav1.Time's query-parameter form: RFC 3339, fractional seconds allowed. */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$/

function parseTimestamp(text: string): number | undefined {
  const m = RFC3339.exec(text)
  if (!m) return undefined
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number]
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59) return undefined
  const zone = m[8] ?? 'Z'
  if (zone !== 'Z' && (Number(zone.slice(1, 3)) > 23 || Number(zone.slice(4)) > 59)) return undefined
  return Date.parse(text)
}

/** A `date` cell: the time since the timestamp, as upstream's ConvertToHumanReadableDateType prints it. */
function dateCell(value: string, now: Date): string {
  // An empty string (or a JSON null sent as a query parameter) is the zero time.
  if (value === '' || value === 'null') return '<unknown>'
  const at = parseTimestamp(value)
  return at === undefined ? '<invalid>' : humanDuration(now.getTime() - at)
}

/** upstream's cellForJSONValue: the value when it has the column's type, else an empty cell. */
function typedCell(type: string, value: unknown, now: Date): unknown {
  switch (type) {
    case 'integer':
      // A float64 becomes an int64 by dropping its fraction.
      return typeof value === 'number' ? Math.trunc(value) : null
    case 'number':
      return typeof value === 'number' ? value : null
    case 'boolean':
      return typeof value === 'boolean' ? value : null
    case 'date':
      return typeof value === 'string' ? dateCell(value, now) : null
    default:
      return null
  }
}

/**
 * The longest text a `string` cell shows. A column whose path names a
 * whole subtree prints all of it: `.spec` of an object of 50,000 fields,
 * in each of 1,000 columns, made a Table of gigabytes. Past this the cell
 * is empty, as for a path that fails (upstream prints it all).
 */
export const MAX_CELL_CHARS = 64 * 1024

/** A `string` cell prints whatever the path finds, as the JSONPath printer does (`map[a:1]`, `[x y]`). */
function stringCell(value: unknown): string | null {
  // A stored object's maps do not change: each is sorted once for every column and row that prints it.
  return value === null ? '<no value>' : (goPrintWithin(value, MAX_CELL_CHARS, sortedKeysOnce) ?? null)
}

function customColumn(col: CustomResourceColumnDefinition): TableColumn | undefined {
  const path = compileJsonPath(`{${col.jsonPath}}`, { allowMissingKeys: true })
  if (typeof path === 'string') return undefined
  const cell = (obj: KubeObject, now: Date, row?: RowBudget): unknown => {
    let results: unknown[][]
    try {
      results = path.find(obj, row)
    } catch (err) {
      if (err instanceof JsonPathError) return null
      throw err
    }
    const found = results[0]
    if (!found?.length) return null
    // Printer columns are simple paths: the first result is the value.
    const value = found[0]
    return col.type === 'string' ? stringCell(value) : typedCell(col.type, value, now)
  }
  const column: TableColumn = {
    name: col.name,
    type: col.type as TableColumn['type'],
    description: col.description || `Custom resource definition column (in JSONPath format): ${col.jsonPath}`,
    priority: col.priority ?? 0,
    cell,
  }
  if (col.format) column.format = col.format
  return column
}

/**
 * The table columns of one version. A column whose path does not parse
 * ends the list there, as upstream keeps the columns read before it.
 */
export function customResourceColumns(columns: CustomResourceColumnDefinition[] | undefined): TableColumn[] {
  const out: TableColumn[] = [nameColumn]
  for (const col of columns?.length ? columns : DEFAULT_COLUMNS) {
    const column = customColumn(col)
    if (!column) break
    out.push(column)
  }
  return out
}
