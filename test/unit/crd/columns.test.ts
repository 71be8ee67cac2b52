import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { customResourceColumns } from '../../../core/crd/columns.js'
import { toTable } from '../../../core/registry/table.js'
import type { CustomResourceColumnDefinition } from '../../../core/resources/apiextensions/types.js'
import type { ResourceEntry } from '../../../core/resources/catalogue.js'
import type { KubeObject } from '../../../core/machinery/object.js'

const NOW = new Date('2024-05-01T12:00:00Z')

function crontab(spec: Record<string, unknown>, extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'stable.example.com/v1',
    kind: 'CronTab',
    metadata: { name: 'nightly', namespace: 'default', creationTimestamp: '2024-05-01T11:55:00Z', resourceVersion: '7' },
    spec,
    ...extra,
  }
}

function entryWith(columns: CustomResourceColumnDefinition[] | undefined): ResourceEntry {
  return {
    group: 'stable.example.com',
    version: 'v1',
    kind: 'CronTab',
    listKind: 'CronTabList',
    resource: 'crontabs',
    singular: 'crontab',
    namespaced: true,
    verbs: ['get', 'list'],
    typeName: 'com.example.stable.v1.CronTab',
    validateName: () => [],
    strategy: {},
    columns: customResourceColumns(columns),
  }
}

/** The one row of a table of `obj`, as a client reads it. */
function cells(columns: CustomResourceColumnDefinition[] | undefined, obj: KubeObject): unknown[] {
  const table = toTable(entryWith(columns), [obj], { resourceVersion: '7' }, 'None', NOW)
  return table.rows[0]?.cells ?? []
}

const col = (name: string, type: string, jsonPath: string, more: Partial<CustomResourceColumnDefinition> = {}) => ({
  name,
  type,
  jsonPath,
  ...more,
})

describe('custom resource printer columns', () => {
  it('without columns of its own, a version shows NAME and AGE', () => {
    const table = toTable(entryWith(undefined), [crontab({})], { resourceVersion: '7' }, 'None', NOW)
    assert.deepEqual(
      table.columnDefinitions?.map((c) => [c.name, c.type, c.format, c.priority]),
      [
        ['Name', 'string', 'name', 0],
        ['Age', 'date', '', 0],
      ],
    )
    assert.deepEqual(table.rows[0]?.cells, ['nightly', '5m'])
    assert.deepEqual(customResourceColumns([]).map((c) => c.name), ['Name', 'Age'])
  })

  it('lists NAME first, then every column with its type, format, priority and description', () => {
    const defs = toTable(
      entryWith([
        col('Spec', 'string', '.spec.cronSpec', { description: 'the schedule' }),
        col('Replicas', 'integer', '.spec.replicas', { format: 'int32', priority: 1 }),
      ]),
      [],
      { resourceVersion: '1' },
      'None',
      NOW,
    ).columnDefinitions
    assert.deepEqual(defs?.slice(1), [
      { name: 'Spec', type: 'string', format: '', description: 'the schedule', priority: 0 },
      {
        name: 'Replicas',
        type: 'integer',
        format: 'int32',
        description: 'Custom resource definition column (in JSONPath format): .spec.replicas',
        priority: 1,
      },
    ])
    assert.equal(defs?.[0]?.name, 'Name')
  })

  it('fills each cell with the first result of its path, typed as the column says', () => {
    const obj = crontab(
      {
        cronSpec: '* * * * */5',
        replicas: 3,
        ratio: 2.75,
        ready: true,
        started: '2024-05-01T10:00:00Z',
        items: [{ name: 'a' }, { name: 'b' }],
      },
      { status: { conditions: [{ type: 'Ready', status: 'True' }] } },
    )
    const row = cells(
      [
        col('Spec', 'string', '.spec.cronSpec'),
        col('Replicas', 'integer', '.spec.replicas'),
        col('Ratio', 'number', '.spec.ratio'),
        col('Ratio As Int', 'integer', '.spec.ratio'),
        col('Ready', 'boolean', '.spec.ready'),
        col('Started', 'date', '.spec.started'),
        col('First Item', 'string', '.spec.items[*].name'),
        col('Condition', 'string', '.status.conditions[?(@.type=="Ready")].status'),
      ],
      obj,
    )
    assert.deepEqual(row, ['nightly', '* * * * */5', 3, 2.75, 2, true, '120m', 'a', 'True'])
  })

  it('prints anything under a string column as the JSONPath printer does', () => {
    const obj = crontab({ replicas: 3, ratio: 0.5, big: 12345678.5, on: false, labels: { b: 'x', a: 1 }, list: ['x', 'y'], none: null })
    const row = cells(
      [
        col('Int', 'string', '.spec.replicas'),
        col('Float', 'string', '.spec.ratio'),
        col('Big', 'string', '.spec.big'),
        col('Bool', 'string', '.spec.on'),
        col('Map', 'string', '.spec.labels'),
        col('List', 'string', '.spec.list'),
        col('Null', 'string', '.spec.none'),
      ],
      obj,
    )
    assert.deepEqual(row.slice(1), ['3', '0.5', '1.23456785e+07', 'false', 'map[a:1 b:x]', '[x y]', '<no value>'])
  })

  it('leaves a cell empty when the path finds nothing, fails, or finds a value of another type', () => {
    const obj = crontab({ replicas: 'three', items: [], started: 5, ready: 'yes' })
    const row = cells(
      [
        col('Missing', 'string', '.spec.missing'),
        col('Out Of Range', 'string', '.spec.items[3]'),
        col('Not An Integer', 'integer', '.spec.replicas'),
        col('Not A Number', 'number', '.spec.replicas'),
        col('Not A Bool', 'boolean', '.spec.ready'),
        col('Not A Date', 'date', '.spec.started'),
      ],
      obj,
    )
    assert.deepEqual(row, ['nightly', null, null, null, null, null, null])
  })

  it('prints a whole subtree up to 64 KiB in a string cell, and leaves a longer one empty', () => {
    const small = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${String(i).padStart(3, '0')}`, [i, { n: null }]]))
    const wide = Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, i]))
    const row = cells([col('Small', 'string', '.spec.small'), col('Wide', 'string', '.spec.wide'), col('Filtered', 'string', '.spec.wide[?(@.a=="b")]')], crontab({ small, wide }))
    assert.equal(row[1], `map[${Object.keys(small).map((k, i) => `${k}:[${i} map[n:<nil>]]`).join(' ')}]`)
    assert.deepEqual(row.slice(2), [null, null])
  })

  it('shows a date it cannot read as <invalid>, and an empty one as <unknown>', () => {
    const row = cells(
      [col('Bad', 'date', '.spec.bad'), col('Empty', 'date', '.spec.empty'), col('Feb 30', 'date', '.spec.feb30')],
      crontab({ bad: 'yesterday', empty: '', feb30: '2024-02-30T00:00:00Z' }),
    )
    assert.deepEqual(row.slice(1), ['<invalid>', '<unknown>', '<invalid>'])
  })

  it('keeps the columns before one whose path does not parse, and drops the rest', () => {
    const columns = customResourceColumns([
      col('Replicas', 'integer', '.spec.replicas'),
      col('Broken', 'string', '.spec.items['),
      col('Later', 'string', '.spec.later'),
    ])
    assert.deepEqual(
      columns.map((c) => c.name),
      ['Name', 'Replicas'],
    )
  })
})
