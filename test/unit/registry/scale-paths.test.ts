/** A custom resource's scale subresource, read from and written to the CRD's scale paths. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { StatusError } from '../../../core/machinery/status-error.js'
import type { RequestContext } from '../../../core/registry/request-context.js'
import { getScale, updateScale } from '../../../core/registry/scale.js'
import { validateCustomResourceScale } from '../../../core/resources/scale-paths.js'
import { ResourceStore } from '../../../core/registry/store.js'
import type { ResourceEntry, ScalePaths } from '../../../core/resources/catalogue.js'
import type { KubeObject } from '../../../core/machinery/object.js'
import { MemoryStorage } from '../../../core/storage/memory.js'
import { errorText } from '../../../core/machinery/field.js'

const PATHS: ScalePaths = {
  specReplicasPath: '.spec.scaling.count',
  statusReplicasPath: '.status.count',
  labelSelectorPath: '.status.labelSelector',
}

/** A namespaced custom resource whose strategy checks the scale fields as upstream's custom resource strategy does. */
function entryWith(paths: ScalePaths, checked: boolean): ResourceEntry {
  return {
    group: 'stable.example.com',
    version: 'v1',
    kind: 'CronTab',
    listKind: 'CronTabList',
    resource: 'crontabs',
    singular: 'crontab',
    namespaced: true,
    verbs: ['create', 'get', 'update', 'patch'],
    subresources: [{ name: 'scale', kind: 'Scale', group: 'autoscaling', version: 'v1', verbs: ['get', 'update', 'patch'] }],
    typeName: 'com.example.stable.v1.CronTab',
    validateName: () => [],
    strategy: checked
      ? {
          validate: (obj) => validateCustomResourceScale(obj, paths),
          validateUpdate: (obj) => validateCustomResourceScale(obj, paths),
        }
      : {},
    columns: [],
    schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    scalePaths: paths,
  }
}

function ctx(): RequestContext {
  return { user: { username: 'admin', groups: ['system:masters'] }, now: new Date('2024-05-01T12:00:00Z'), dryRun: false }
}

async function storeWith(body: Record<string, unknown>, checked = true): Promise<ResourceStore> {
  const store = new ResourceStore(entryWith(PATHS, checked), new MemoryStorage())
  await store.create(
    'default',
    { apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name: 'nightly', namespace: 'default' }, ...body },
    ctx(),
  )
  return store
}

/** Runs `action` and gives back the StatusError it throws. */
async function failure(action: () => Promise<unknown>): Promise<StatusError> {
  try {
    await action()
  } catch (err) {
    assert.ok(err instanceof StatusError, `a StatusError, not ${String(err)}`)
    return err
  }
  assert.fail('expected a failure')
}

const putBody = (replicas: number) => () => ({ apiVersion: 'autoscaling/v1', kind: 'Scale', spec: { replicas } })

describe('the scale of a custom resource', () => {
  it('reads spec and status replicas and the selector from the scale paths', async () => {
    const store = await storeWith({
      spec: { scaling: { count: 3 }, replicas: 99 },
      status: { count: 2, labelSelector: 'app=nightly' },
    })
    const scale = await getScale(store, 'default', 'nightly')
    assert.equal(scale.kind, 'Scale')
    assert.equal(scale.apiVersion, 'autoscaling/v1')
    assert.equal(scale.metadata.name, 'nightly')
    assert.equal(scale.metadata.namespace, 'default')
    assert.ok(scale.metadata.uid && scale.metadata.resourceVersion && scale.metadata.creationTimestamp)
    assert.deepEqual(scale['spec'], { replicas: 3 })
    assert.deepEqual(scale['status'], { replicas: 2, selector: 'app=nightly' })
  })

  it('shows status replicas 0 and no selector when the status holds none', async () => {
    const store = await storeWith({ spec: { scaling: { count: 0 } } })
    const scale = await getScale(store, 'default', 'nightly')
    assert.deepEqual(scale['spec'], {})
    assert.deepEqual(scale['status'], { replicas: 0 })
  })

  it('answers a read with 500 when the spec replicas path holds nothing', async () => {
    const store = await storeWith({ spec: {} })
    const err = await failure(() => getScale(store, 'default', 'nightly'))
    assert.equal(err.code, 500)
    assert.equal(err.reason, 'InternalError')
    assert.equal(err.message, 'Internal error occurred: the spec replicas field ".spec.scaling.count" does not exist')
  })

  const WRONG_TYPES: Array<[string, Record<string, unknown>, string]> = [
    ['a string as spec replicas', { spec: { scaling: { count: 'three' } } }, '.spec.scaling.count accessor error: three is of the type string, expected int64'],
    ['a fraction as spec replicas', { spec: { scaling: { count: 1.5 } } }, '.spec.scaling.count accessor error: 1.5 is of the type float64, expected int64'],
    [
      'a string on the way to spec replicas',
      { spec: { scaling: 'fast' } },
      '.spec.scaling.count accessor error: fast is of the type string, expected map[string]interface{}',
    ],
    [
      'a list as status replicas',
      { spec: { scaling: { count: 1 } }, status: { count: [1] } },
      '.status.count accessor error: [1] is of the type []interface {}, expected int64',
    ],
    [
      'an object as the selector',
      { spec: { scaling: { count: 1 } }, status: { labelSelector: { app: 'x' } } },
      '.status.labelSelector accessor error: map[app:x] is of the type map[string]interface {}, expected string',
    ],
  ]
  for (const [what, body, message] of WRONG_TYPES) {
    it(`answers 500 for ${what}, for a read and a write alike`, async () => {
      // Stored without the checks, as an object written before the CRD had its scale paths.
      const store = await storeWith(body, false)
      const read = await failure(() => getScale(store, 'default', 'nightly'))
      assert.equal(read.code, 500)
      assert.equal(read.message, message)
      const write = await failure(() => updateScale(store, 'default', 'nightly', putBody(2), ctx()))
      assert.equal(write.code, 500)
      assert.equal(write.message, message)
    })
  }

  it('writes the replicas of a PUT at the spec path and leaves everything else', async () => {
    const store = await storeWith({ spec: { scaling: { count: 1, mode: 'fast' }, replicas: 99 }, status: { count: 1 } })
    const scale = await updateScale(store, 'default', 'nightly', putBody(5), ctx())
    assert.deepEqual(scale['spec'], { replicas: 5 })
    const stored = await store.get('default', 'nightly')
    assert.deepEqual(stored['spec'], { scaling: { count: 5, mode: 'fast' }, replicas: 99 })
    assert.deepEqual(stored['status'], { count: 1 })
  })

  it('creates the objects on the way to a spec path that holds nothing yet', async () => {
    const store = await storeWith({ spec: {} })
    await updateScale(store, 'default', 'nightly', putBody(2), ctx())
    assert.deepEqual((await store.get('default', 'nightly'))['spec'], { scaling: { count: 2 } })
  })

  it('refuses a patch that leaves the missing spec replicas empty with 400, and stores nothing', async () => {
    const store = await storeWith({ spec: { other: true } })
    const before = await store.get('default', 'nightly')
    const labelOnly = (current: KubeObject) => ({ ...current, metadata: { ...current.metadata, labels: { a: 'b' } } })
    const err = await failure(() => updateScale(store, 'default', 'nightly', labelOnly, ctx()))
    assert.equal(err.code, 400)
    assert.equal(err.reason, 'BadRequest')
    assert.equal(err.message, 'the spec replicas field ".spec.scaling.count" cannot be empty')
    assert.deepEqual(await store.get('default', 'nightly'), before)
  })

  it('leaves negative replicas to the resource validation, which refuses them under the resource kind', async () => {
    const store = await storeWith({ spec: { scaling: { count: 1 } } })
    const err = await failure(() => updateScale(store, 'default', 'nightly', putBody(-1), ctx()))
    assert.equal(err.code, 422)
    assert.equal(err.details?.kind, 'CronTab')
    assert.deepEqual(
      err.details?.causes?.map((c) => `${c.field}: ${c.message}`),
      ['.spec.scaling.count: Invalid value: -1: should be a non-negative integer'],
    )
    assert.deepEqual((await store.get('default', 'nightly'))['spec'], { scaling: { count: 1 } })
  })

  it('takes a resourceVersion in the Scale as a precondition', async () => {
    const store = await storeWith({ spec: { scaling: { count: 1 } } })
    const stale = () => ({ kind: 'Scale', metadata: { resourceVersion: '1' }, spec: { replicas: 4 } })
    const err = await failure(() => updateScale(store, 'default', 'nightly', stale, ctx()))
    assert.equal(err.code, 409)
  })
})

describe('the checks of a custom resource scale fields', () => {
  const obj = (spec: unknown, status: unknown): KubeObject => ({ metadata: { name: 'x' }, spec, status })

  it('accepts integers in range and a string selector, and absent fields', () => {
    assert.deepEqual(validateCustomResourceScale(obj({ scaling: { count: 3 } }, { count: 2, labelSelector: 'a=b' }), PATHS), [])
    assert.deepEqual(validateCustomResourceScale(obj({}, {}), PATHS), [])
  })

  it('words each problem as upstream, the field named by the CRD path', () => {
    const errs = validateCustomResourceScale(
      obj({ scaling: { count: 2147483648 } }, { count: 'two', labelSelector: 5 }),
      PATHS,
    ).map(errorText)
    assert.deepEqual(errs, [
      '.spec.scaling.count: Invalid value: 2147483648: should be less than or equal to 2147483647',
      '.status.count: Invalid value: 0: .status.count accessor error: two is of the type string, expected int64',
      '.status.labelSelector: Invalid value: "": .status.labelSelector accessor error: 5 is of the type int64, expected string',
    ])
  })

  it('checks the status fields alone for a status update', () => {
    const errs = validateCustomResourceScale(obj({ scaling: { count: -1 } }, { count: -2 }), PATHS, 'status').map(errorText)
    assert.deepEqual(errs, ['.status.count: Invalid value: -2: should be a non-negative integer'])
  })
})
