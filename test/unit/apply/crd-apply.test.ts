import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  ApplyConflictError,
  applyObject as applyRaw,
  FieldSet,
  updateManagedFields,
  type ManagedFieldsEntry,
} from '../../../core/apply/index.js'
import { applyShapeOf } from '../../../core/apply/crd-shape.js'
import { API_VERSION, cronTab, cronTabSchema, TYPE_NAME } from './crd-fixtures.js'

type Obj = Record<string, any>

const shape = applyShapeOf(cronTabSchema)
const T1 = new Date('2024-05-01T10:00:00Z')
const T2 = new Date('2024-05-01T11:00:00Z')
const base = { apiVersion: API_VERSION, typeName: TYPE_NAME, shape }
const opts = (force = false) => ({ ...base, now: T2, force })

const applyObject = (live: Obj | undefined, config: Obj, manager: string, force = false): Obj =>
  applyRaw(live, config, manager, opts(force)).object as Obj

/** A live object created by `manager` through an ordinary create. */
function created(obj: Obj, manager: string): Obj {
  const managedFields = updateManagedFields(undefined, obj, manager, { ...base, now: T1 })
  return { ...obj, metadata: { ...obj.metadata, uid: 'u1', managedFields } }
}

const fieldsOf = (obj: Obj, manager: string): unknown =>
  (obj.metadata.managedFields as ManagedFieldsEntry[]).find((e) => e.manager === manager)?.fieldsV1

function conflictOf(fn: () => unknown): { message: string; fields: string[] } {
  try {
    fn()
  } catch (err) {
    if (err instanceof ApplyConflictError) return { message: err.message, fields: err.causes.map((c) => c.field) }
    throw err
  }
  assert.fail('expected a conflict')
}

describe('server-side apply of a custom resource', () => {
  it('records an Update entry on create that owns spec even when empty, never apiVersion, kind, name or namespace', () => {
    const live = created(cronTab({}, { metadata: { name: 'ct', namespace: 'default', labels: { a: 'b' } } }), 'creator')
    assert.deepEqual(live.metadata.managedFields, [
      {
        manager: 'creator',
        operation: 'Update',
        apiVersion: API_VERSION,
        time: '2024-05-01T10:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:a': {} } }, 'f:spec': {} },
      },
    ])
  })

  it('creates with one Apply entry and answers a 409 naming the updater when another manager changes its field', () => {
    const applied = applyObject(undefined, cronTab({ cronSpec: '* * * * *', replicas: 1 }), 'tool')
    assert.deepEqual(fieldsOf(applied, 'tool'), { 'f:spec': { 'f:cronSpec': {}, 'f:replicas': {} } })

    const live = created(cronTab({ cronSpec: '* * * * *', replicas: 1 }), 'creator')
    const c = conflictOf(() => applyObject(live, cronTab({ replicas: 3 }), 'tool'))
    assert.equal(c.message, `Apply failed with 1 conflict: conflict with "creator" using ${API_VERSION}: .spec.replicas`)
    assert.deepEqual(c.fields, ['.spec.replicas'])

    // the same value is shared, not a conflict
    const shared = applyObject(live, cronTab({ replicas: 1 }), 'tool')
    assert.deepEqual(fieldsOf(shared, 'tool'), { 'f:spec': { 'f:replicas': {} } })
    // created from an empty object, the creator owns spec itself too (upstream's `.` under f:spec for custom resources)
    assert.deepEqual(fieldsOf(shared, 'creator'), { 'f:spec': { '.': {}, 'f:cronSpec': {}, 'f:replicas': {} } })

    const forced = applyObject(live, cronTab({ replicas: 3 }), 'tool', true)
    assert.equal(forced.spec.replicas, 3)
    assert.deepEqual(fieldsOf(forced, 'creator'), { 'f:spec': { '.': {}, 'f:cronSpec': {} } })
  })

  it('merges list-map items by their keys: another applier adds an item freely but conflicts on an owned item field', () => {
    let live = applyObject(undefined, cronTab({ ports: [{ containerPort: 80, name: 'x' }] }), 'a')
    live = applyObject(live, cronTab({ ports: [{ containerPort: 8080, protocol: 'TCP', name: 'y' }] }), 'b')
    assert.deepEqual(live.spec.ports, [
      { containerPort: 80, name: 'x' },
      { containerPort: 8080, protocol: 'TCP', name: 'y' },
    ])
    const c = conflictOf(() => applyObject(live, cronTab({ ports: [{ containerPort: 80, protocol: 'TCP', name: 'z' }] }), 'b'))
    assert.deepEqual(c.fields, ['.spec.ports[containerPort=80,protocol="TCP"].name'])

    // b stops applying its item: it goes, a's stays
    live = applyObject(live, cronTab({ cronSpec: 'x' }), 'b')
    assert.deepEqual(live.spec.ports, [{ containerPort: 80, name: 'x' }])
  })

  it('keeps a set as the union of what each applier applies and drops only the values an applier stops applying', () => {
    let live = applyObject(undefined, cronTab({ tags: ['a', 'shared'] }), 'one')
    live = applyObject(live, cronTab({ tags: ['b', 'shared'] }), 'two')
    assert.deepEqual(live.spec.tags, ['a', 'b', 'shared'])
    live = applyObject(live, cronTab({ tags: ['shared'] }), 'one')
    assert.deepEqual(live.spec.tags, ['b', 'shared'])
    live = applyObject(live, cronTab({ tags: [] }), 'two')
    assert.deepEqual(live.spec.tags, ['shared'])
  })

  it('replaces an atomic list whole: a different list conflicts, forcing takes the whole list', () => {
    const live = applyObject(undefined, cronTab({ args: ['x', 'y'] }), 'one')
    assert.deepEqual(conflictOf(() => applyObject(live, cronTab({ args: ['z'] }), 'two')).fields, ['.spec.args'])
    const forced = applyObject(live, cronTab({ args: ['z'] }), 'two', true)
    assert.deepEqual(forced.spec.args, ['z'])
    assert.equal(fieldsOf(forced, 'one'), undefined, 'one owned nothing else and is gone')
  })

  it('shares a granular map per key and an atomic object as one field', () => {
    let live = applyObject(undefined, cronTab({ labels: { a: '1' }, selector: { app: 'web' } }), 'one')
    live = applyObject(live, cronTab({ labels: { b: '2' } }), 'two')
    assert.deepEqual(live.spec.labels, { a: '1', b: '2' })
    assert.deepEqual(conflictOf(() => applyObject(live, cronTab({ selector: { app: 'db' } }), 'two')).fields, ['.spec.selector'])
    // replaced, not merged: the atomic object takes the applied value as it is
    const forced = applyObject(live, cronTab({ selector: {} }), 'two', true)
    assert.deepEqual(forced.spec.selector, {})
  })

  it('owns and prunes what preserve-unknown-fields keeps, per key at any depth', () => {
    let live = applyObject(undefined, cronTab({ config: { mode: 'a', extra: { keep: 1, drop: 2 } } }), 'one')
    live = applyObject(live, cronTab({ config: { other: { x: true } } }), 'two')
    assert.deepEqual(live.spec.config, { mode: 'a', extra: { keep: 1, drop: 2 }, other: { x: true } })
    assert.deepEqual(conflictOf(() => applyObject(live, cronTab({ config: { extra: { keep: 5 } } }), 'two')).fields, ['.spec.config.extra.keep'])
    live = applyObject(live, cronTab({ config: { mode: 'a', extra: { keep: 1 } } }), 'one')
    assert.deepEqual(live.spec.config, { mode: 'a', extra: { keep: 1 }, other: { x: true } })
  })

  it('turns an untyped object into a scalar as a change of that field, its old fields owned by nobody', () => {
    let live = applyObject(undefined, cronTab({ config: { extra: { a: 1 } } }), 'one')
    live = applyObject(live, cronTab({ config: { extra: 'flat' } }), 'one')
    assert.equal(live.spec.config.extra, 'flat')
    assert.deepEqual(fieldsOf(live, 'one'), { 'f:spec': { 'f:config': { 'f:extra': {} } } })
  })

  it('shares an embedded resource: metadata labels per key, its untyped spec per field', () => {
    let live = applyObject(undefined, cronTab({ template: { metadata: { labels: { a: '1' } }, spec: { x: 1 } } }), 'one')
    live = applyObject(live, cronTab({ template: { metadata: { labels: { b: '2' } }, spec: { y: 2 } } }), 'two')
    assert.deepEqual(live.spec.template, { metadata: { labels: { a: '1', b: '2' } }, spec: { x: 1, y: 2 } })
  })

  it('leaves status to nobody through the main resource when it is a reset field, and owns it when it is not', () => {
    const config = cronTab({ replicas: 1 }, { status: { ready: true } })
    const result = applyRaw(undefined, config, 'tool', { ...opts(), resetFields: FieldSet.of([{ field: 'status' }]) })
    assert.deepEqual(result.managedFields[0]?.fieldsV1, { 'f:spec': { 'f:replicas': {} } })
    const owned = applyRaw(undefined, config, 'tool', { ...opts(), resetFields: FieldSet.empty() })
    assert.deepEqual(owned.managedFields[0]?.fieldsV1, { 'f:spec': { 'f:replicas': {} }, 'f:status': { 'f:ready': {} } })
  })
})
