import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  ApplyConflictError,
  applyObject as applyRaw,
  LAST_APPLIED_ANNOTATION,
  updateManagedFields,
  type ManagedFieldsEntry,
} from '../../../core/apply/index.js'
import { buildLastApplied } from '../../../core/apply/last-applied.js'
import { applyObjectInSteps } from '../../../core/apply/apply.js'
import { runCounting } from '../../fixtures/checkpoints.js'

const DEPLOYMENT = 'io.k8s.api.apps.v1.Deployment'
const T1 = new Date('2024-05-01T10:00:00Z')
const T2 = new Date('2024-05-01T11:00:00Z')
const opts = (force = false, now = T2, subresource?: string) => ({ force, now, apiVersion: 'apps/v1', typeName: DEPLOYMENT, subresource })

type Obj = Record<string, any>

/** applyObject with the result typed loosely, as tests read deep fields. */
const applyObject = (...args: Parameters<typeof applyRaw>) => applyRaw(...args) as { object: Obj; managedFields: ManagedFieldsEntry[] }

const config = (spec: Obj | undefined, metadata: Obj = {}): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'default', ...metadata },
  ...(spec ? { spec } : {}),
})

const template = (containers: Obj[]) => ({
  selector: { matchLabels: { app: 'web' } },
  template: { metadata: { labels: { app: 'web' } }, spec: { containers } },
})

const entries = (obj: Obj): ManagedFieldsEntry[] => obj.metadata.managedFields
const summary = (obj: Obj) => entries(obj).map((e) => [e.manager, e.operation, e.fieldsV1])

/** A live object created by `manager` through an ordinary create. */
function created(obj: Obj, manager: string): Obj {
  return { ...obj, metadata: { ...obj.metadata, uid: 'u1', managedFields: updateManagedFields(undefined, obj, manager, { now: T1, apiVersion: 'apps/v1', typeName: DEPLOYMENT }) } }
}

describe('server-side apply', () => {
  it('creates an object and records one Apply entry for the applier', () => {
    const { object, managedFields } = applyObject(undefined, config({ replicas: 2, ...template([{ name: 'nginx', image: 'nginx:1' }]) }), 'tool', opts())
    assert.equal(object.spec.replicas, 2)
    assert.equal(object.spec.template.spec.containers[0].image, 'nginx:1')
    assert.deepEqual(managedFields, [
      {
        manager: 'tool',
        operation: 'Apply',
        apiVersion: 'apps/v1',
        time: '2024-05-01T11:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:spec': {
            'f:replicas': {},
            'f:selector': {},
            'f:template': {
              'f:metadata': { 'f:labels': { 'f:app': {} } },
              'f:spec': { 'f:containers': { 'k:{"name":"nginx"}': { 'f:image': {}, 'f:name': {}, '.': {} } } },
            },
          },
        },
      },
    ])
    assert.deepEqual(object.metadata.managedFields, managedFields)
  })

  it('refuses to change a field another manager owns with a different value, worded as upstream', () => {
    const live = created(config({ replicas: 1, ...template([{ name: 'nginx', image: 'nginx:1' }]) }), 'kubectl-client-side-apply')
    assert.throws(
      () => applyObject(live, config({ replicas: 3 }), 'tool', opts()),
      (e: unknown) =>
        e instanceof ApplyConflictError &&
        e.message === 'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: .spec.replicas' &&
        JSON.stringify(e.causes) ===
          JSON.stringify([{ reason: 'FieldManagerConflict', message: 'conflict with "kubectl-client-side-apply" using apps/v1', field: '.spec.replicas' }]),
    )
    assert.throws(
      () => applyObject(live, config({ replicas: 3, template: { spec: { containers: [{ name: 'nginx', image: 'nginx:2' }] } } }), 'tool', opts()),
      (e: unknown) =>
        e instanceof ApplyConflictError &&
        e.message ===
          'Apply failed with 2 conflicts: conflicts with "kubectl-client-side-apply" using apps/v1:\n- .spec.replicas\n- .spec.template.spec.containers[name="nginx"].image',
    )
  })

  it('shares a field applied with the value it already has, and takes it over with force', () => {
    const live = created(config({ replicas: 1, ...template([{ name: 'nginx', image: 'nginx:1' }]) }), 'creator')
    const same = applyObject(live, config({ replicas: 1 }), 'tool', opts())
    assert.deepEqual(summary(same.object).map(([m]) => m), ['tool', 'creator'])
    assert.deepEqual(entries(same.object)[1]!.fieldsV1!['f:spec'], entries(live)[0]!.fieldsV1!['f:spec'])
    // no change to the object: the applier's entry carries no time, as upstream leaves it
    assert.equal(entries(same.object)[0]!.time, undefined)

    const forced = applyObject(live, config({ replicas: 5 }), 'tool', opts(true))
    assert.equal(forced.object.spec.replicas, 5)
    const creator = entries(forced.object).find((e) => e.manager === 'creator')!
    assert.equal('f:replicas' in (creator.fieldsV1!['f:spec'] as object), false)
    assert.deepEqual(entries(forced.object).find((e) => e.manager === 'tool')!.fieldsV1, { 'f:spec': { 'f:replicas': {} } })
  })

  it('removes a field the applier alone applied before and no longer applies', () => {
    const first = applyObject(undefined, config({ replicas: 2, minReadySeconds: 5, ...template([{ name: 'a', image: 'a' }, { name: 'b', image: 'b' }]) }), 'tool', opts())
    const second = applyObject(first.object, config({ replicas: 2, ...template([{ name: 'a', image: 'a' }]) }), 'tool', opts())
    assert.equal('minReadySeconds' in second.object.spec, false)
    assert.deepEqual(second.object.spec.template.spec.containers, [{ name: 'a', image: 'a' }])
  })

  it('keeps a field no longer applied when another manager also owns it, and releases it', () => {
    const first = applyObject(undefined, config({ replicas: 2, minReadySeconds: 5 }), 'tool', opts())
    const shared = applyObject(first.object, config({ minReadySeconds: 5 }), 'other', opts())
    const after = applyObject(shared.object, config({ replicas: 2 }), 'tool', opts())
    assert.equal(after.object.spec.minReadySeconds, 5)
    assert.deepEqual(summary(after.object), [
      ['other', 'Apply', { 'f:spec': { 'f:minReadySeconds': {} } }],
      ['tool', 'Apply', { 'f:spec': { 'f:replicas': {} } }],
    ])
  })

  it('keeps a field no longer applied when an updater changed it since', () => {
    const first = applyObject(undefined, config({ replicas: 2, paused: true }), 'tool', opts())
    const edited = structuredClone(first.object)
    edited.spec.paused = false
    edited.metadata.managedFields = updateManagedFields(first.object, edited, 'editor', { now: T2, apiVersion: 'apps/v1', typeName: DEPLOYMENT })
    const after = applyObject(edited, config({ replicas: 2 }), 'tool', opts())
    assert.equal(after.object.spec.paused, false)
  })

  it('merges containers by name and keeps containers other managers added where they were', () => {
    const live = created(config(template([{ name: 'a', image: 'a:1' }, { name: 'sidecar', image: 's:1' }])), 'creator')
    const { object } = applyObject(live, config({ template: { spec: { containers: [{ name: 'a', image: 'a:1' }, { name: 'b', image: 'b:1' }] } } }), 'tool', opts())
    assert.deepEqual(
      object.spec.template.spec.containers.map((c: Obj) => c.name),
      ['a', 'sidecar', 'b'],
    )
    assert.deepEqual(
      entries(object).find((e) => e.manager === 'tool')!.fieldsV1,
      {
        'f:spec': {
          'f:template': {
            'f:spec': {
              'f:containers': {
                'k:{"name":"a"}': { 'f:image': {}, 'f:name': {}, '.': {} },
                'k:{"name":"b"}': { 'f:image': {}, 'f:name': {}, '.': {} },
              },
            },
          },
        },
      },
    )
  })

  it('merges finalizers as a set and removes only those the applier stops applying', () => {
    const first = applyObject(undefined, config(undefined, { finalizers: ['x/a', 'x/b'] }), 'tool', opts())
    const other = applyObject(first.object, config(undefined, { finalizers: ['x/c'] }), 'other', opts())
    assert.deepEqual(other.object.metadata.finalizers, ['x/a', 'x/b', 'x/c'])
    assert.deepEqual(
      entries(other.object).find((e) => e.manager === 'other')!.fieldsV1,
      { 'f:metadata': { 'f:finalizers': { 'v:"x/c"': {} } } },
    )
    const dropped = applyObject(other.object, config(undefined, { finalizers: ['x/a'] }), 'tool', opts())
    assert.deepEqual(dropped.object.metadata.finalizers, ['x/a', 'x/c'])
  })

  it('applies status through the status subresource, owning status only', () => {
    const live = created(config({ replicas: 1, ...template([{ name: 'a', image: 'a' }]) }), 'creator')
    const { object, managedFields } = applyObject(
      live,
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { replicas: 9 }, status: { readyReplicas: 1 } },
      'controller',
      opts(false, T2, 'status'),
    )
    assert.equal(object.status.readyReplicas, 1)
    assert.deepEqual(
      managedFields.map((e) => [e.manager, e.operation, e.subresource, e.fieldsV1]),
      [
        ['controller', 'Apply', 'status', { 'f:status': { 'f:readyReplicas': {} } }],
        ['creator', 'Update', undefined, entries(live)[0]!.fieldsV1],
      ],
    )
  })

  it('gives the fields of an untracked object to before-first-apply', () => {
    const live = { ...config({ replicas: 1, paused: true }), metadata: { name: 'web', namespace: 'default', uid: 'u1' } }
    assert.throws(
      () => applyObject(live, config({ replicas: 2 }), 'tool', opts()),
      (e: unknown) => e instanceof ApplyConflictError && e.message === 'Apply failed with 1 conflict: conflict with "before-first-apply" using apps/v1: .spec.replicas',
    )
    const { managedFields } = applyObject(live, config({ replicas: 1 }), 'tool', opts())
    assert.deepEqual(managedFields.map((e) => e.manager), ['tool', 'before-first-apply'])
  })

  it('lets kubectl take over from client-side apply the fields its last-applied annotation records, and keeps the annotation in sync', () => {
    const recorded = config({ replicas: 1 })
    const base = config({ replicas: 1 }, { annotations: { [LAST_APPLIED_ANNOTATION]: JSON.stringify(recorded) } })
    const live = created(base, 'kubectl-client-side-apply')
    const applied = config({ replicas: 3 })
    assert.throws(() => applyObject(live, applied, 'someone-else', opts()), ApplyConflictError)
    const { object, managedFields } = applyObject(live, applied, 'kubectl', opts())
    assert.equal(object.spec.replicas, 3)
    assert.deepEqual(JSON.parse(object.metadata.annotations[LAST_APPLIED_ANNOTATION]), applied)
    assert.deepEqual(managedFields.find((e) => e.manager === 'kubectl')!.fieldsV1, { 'f:spec': { 'f:replicas': {} } })

    // a field changed since the annotation was written still conflicts
    const drifted = created(config({ replicas: 2 }, { annotations: { [LAST_APPLIED_ANNOTATION]: JSON.stringify(recorded) } }), 'kubectl-client-side-apply')
    assert.throws(() => applyObject(drifted, applied, 'kubectl', opts()), ApplyConflictError)
  })
})

describe('server-side apply of an object of megabytes', () => {
  it('checkpoints within its passes (the check, the merge, the field sets, the clean-up, the copy) and applies as at once', () => {
    const CONFIGMAP = { now: T2, apiVersion: 'v1', typeName: 'io.k8s.api.core.v1.ConfigMap', force: false }
    const data = (n: number, value: string): Obj => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, value]))
    const first = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' }, data: data(20_000, 'a') }
    const live = applyObject(undefined, first, 'one', CONFIGMAP).object
    // Another manager takes half the keys, forced; the first applies again without some of its own.
    const second = { ...first, data: { ...data(10_000, 'b') } }
    const atOnce = applyObject(live, second, 'two', { ...CONFIGMAP, force: true })
    const inSteps = runCounting(applyObjectInSteps(live, second, 'two', { ...CONFIGMAP, force: true, inSteps: true }))
    assert.deepStrictEqual(inSteps.value, atOnce)
    assert.ok(inSteps.checkpoints >= 40, `${inSteps.checkpoints} checkpoints`)
    const third = { ...first, data: data(5_000, 'b') }
    const pruned = runCounting(applyObjectInSteps(atOnce.object, third, 'one', { ...CONFIGMAP, inSteps: true }))
    assert.deepStrictEqual(pruned.value, applyObject(atOnce.object, third, 'one', CONFIGMAP))
    assert.equal(Object.keys(pruned.value.object['data'] as Obj).length, 10_000, "the keys the other manager owns stay, the first's others go")
  })
})

describe('the last-applied annotation the server writes for kubectl', () => {
  it('is the configuration as Go encodes it: keys sorted, HTML escaped, a closing newline, without itself', () => {
    const config = {
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: { name: 'c', annotations: { 'kubectl.kubernetes.io/last-applied-configuration': 'old' } },
      data: { z: '1', a: '<b>&' },
    }
    assert.equal(
      buildLastApplied(config),
      '{"apiVersion":"v1","data":{"a":"\\u003cb\\u003e\\u0026","z":"1"},"kind":"ConfigMap","metadata":{"annotations":{},"name":"c"}}\n',
    )
  })
})
