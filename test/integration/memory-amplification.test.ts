/**
 * A body of 3 MiB can hold a million invalid items. Each error kept is a
 * few hundred bytes, so keeping them all held hundreds of megabytes per
 * request (one Service of a million empty ports ran a 768 MB heap out of
 * memory). A validation keeps its first MAX_FIELD_ERRORS errors and counts
 * the others: the answer is upstream's 422 with its first causes, in
 * order, and the rest counted in the message. The same for a custom
 * resource's schema (with ratcheting intact), the query's write options,
 * and the typing errors of an apply (listed up to a bound, not 43 MB).
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { fieldPath, invalid, invalidError, MAX_FIELD_ERRORS, required, withFieldErrorCap } from '../../core/machinery/field.js'
import { writeOptionErrors } from '../../core/registry/write-options.js'
import { CRDS, widgetDefinition } from './crd-fixtures.js'
import { eventually, startServer, type TestClient } from './harness.js'

const CM = '/api/v1/namespaces/default/configmaps'
const SERVICES = '/api/v1/namespaces/default/services'
const PODS = '/api/v1/namespaces/default/pods'
const LIMIT = 3 * 1024 * 1024

const items = (n: number, item: string): string => Array(n).fill(item).join(',')

/** The count at the end of a truncated message: `, N more errors not shown]`. */
function notShown(message: string): number {
  const m = /, (\d+) more errors not shown\]$/.exec(message)
  assert.ok(m, message.slice(-200))
  return Number(m[1])
}

describe('a body of a million invalid items', { timeout: 120_000 }, () => {
  let api: TestClient
  before(async () => {
    api = await startServer()
  })

  it('refuses a Service of 750000 empty ports with 422, its first causes in order, the rest counted', async () => {
    const ports = 750_000
    const body = `{"metadata":{"name":"ports"},"spec":{"ports":[${items(ports, '{}')}]}}`
    assert.ok(body.length < LIMIT)
    const r = await api.post(SERVICES, body)
    assert.equal(r.status, 422, r.text.slice(0, 300))
    assert.equal(r.body.reason, 'Invalid')
    assert.deepEqual(r.body.details.causes.slice(0, 3), [
      { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.ports[0].name' },
      { reason: 'FieldValueInvalid', message: 'Invalid value: 0: must be between 1 and 65535, inclusive', field: 'spec.ports[0].port' },
      { reason: 'FieldValueInvalid', message: 'Invalid value: 0: must be between 1 and 65535, inclusive', field: 'spec.ports[0].targetPort' },
    ])
    assert.match(r.body.message, /^Service "ports" is invalid: \[spec\.ports\[0\]\.name: Required value, spec\.ports\[0\]\.port: Invalid value: 0: /)
    const shown = r.body.details.causes.length
    assert.ok(shown <= MAX_FIELD_ERRORS, `${shown} causes`)
    // Every error is still counted: three for each port, then a duplicate for each port after the first.
    assert.equal(shown + notShown(r.body.message), 4 * ports - 1)
    // The causes shown are the first errors, in upstream's order.
    const fields = (r.body.details.causes as { field: string }[]).map((c) => c.field)
    assert.deepEqual(fields, Array.from({ length: shown }, (_, k) => `spec.ports[${Math.floor(k / 3)}].${['name', 'port', 'targetPort'][k % 3]}`))
    assert.ok(r.text.length < body.length, `an answer of ${r.text.length} bytes to a body of ${body.length}`)
    assert.equal((await api.get(`${SERVICES}/ports`)).status, 404)
  })

  // Two errors for each: its name part, then that it is neither standard nor qualified.
  it('refuses a ConfigMap of 700000 invalid finalizers on create and on update, and keeps the stored one', async () => {
    const body = (rv?: string) =>
      `{"metadata":{"name":"fin"${rv ? `,"resourceVersion":"${rv}"` : ''},"finalizers":[${items(700_000, '"!"')}]},"data":{"a":"c"}}`
    for (const r of [await api.post(CM, body())]) {
      assert.equal(r.status, 422, r.text.slice(0, 300))
      assert.ok(r.body.details.causes.length <= MAX_FIELD_ERRORS)
      assert.equal(r.body.details.causes.length + notShown(r.body.message), 2 * 700_000)
    }
    assert.equal((await api.get(`${CM}/fin`)).status, 404)
    const created = await api.post(CM, { metadata: { name: 'fin' }, data: { a: 'b' } })
    assert.equal(created.status, 201)
    const r = await api.put(`${CM}/fin`, body(created.body.metadata.resourceVersion))
    assert.equal(r.status, 422, r.text.slice(0, 300))
    assert.equal(r.body.details.causes[0].reason, 'FieldValueInvalid')
    assert.match(r.body.details.causes[0].field, /^metadata\.finalizers/)
    assert.ok(r.body.details.causes.length <= MAX_FIELD_ERRORS)
    // At least one error for each finalizer, all counted.
    assert.ok(r.body.details.causes.length + notShown(r.body.message) >= 700_000)
    const stored = await api.get(`${CM}/fin`)
    assert.deepEqual([stored.body.data, stored.body.metadata.finalizers], [{ a: 'b' }, undefined])
  })

  it('keeps the first errors in the order upstream lists them: metadata before a million bad containers', async () => {
    const body = `{"metadata":{"name":"Bad_Name"},"spec":{"containers":[${items(350_000, '{}')}]}}`
    const r = await api.post(PODS, body)
    assert.equal(r.status, 422, r.text.slice(0, 300))
    assert.equal(r.body.details.causes[0].field, 'metadata.name')
    assert.equal(r.body.details.causes[1].field, 'spec.containers[0].name')
    assert.ok(r.body.details.causes.length <= MAX_FIELD_ERRORS)
    // Every container is decoded, defaulted, given its token mount and validated (in steps): each misses its name and image.
    assert.equal(r.body.details.causes.length + notShown(r.body.message), 1 + 2 * 350_000)
    assert.equal((await api.get(`${PODS}/Bad_Name`)).status, 404)
  })

  it('bounds the errors made by hand too: a Node of 80000 equal taints', async () => {
    const taints = 80_000
    const body = `{"metadata":{"name":"node-a"},"spec":{"taints":[${items(taints, '{"key":"a","effect":"NoSchedule"}')}]}}`
    assert.ok(body.length < LIMIT)
    const r = await api.post('/api/v1/nodes', body)
    assert.equal(r.status, 422, r.text.slice(0, 300))
    assert.deepEqual(r.body.details.causes[0], {
      reason: 'FieldValueDuplicate',
      message: r.body.details.causes[0].message,
      // Under metadata, as upstream's ValidateNode names it.
      field: 'metadata.taints[1]',
    })
    assert.match(r.body.details.causes[0].message, /^Duplicate value: .*: taints must be unique by key and effect pair$/)
    assert.ok(r.body.details.causes.length <= MAX_FIELD_ERRORS)
    assert.equal(r.body.details.causes.length + notShown(r.body.message), taints - 1)
    assert.equal((await api.get('/api/v1/nodes/node-a')).status, 404)
  })

  it('answers a few of them at once, each with its own count', async () => {
    const body = (n: number) => `{"metadata":{"name":"many"},"spec":{"ports":[${items(n, '{}')}]}}`
    const replies = await Promise.all([200_000, 300_000, 400_000].map((n) => api.post(SERVICES, body(n))))
    assert.deepEqual(replies.map((r) => r.status), [422, 422, 422])
    assert.deepEqual(
      replies.map((r) => r.body.details.causes.length + notShown(r.body.message)),
      [4 * 200_000 - 1, 4 * 300_000 - 1, 4 * 400_000 - 1],
    )
  })
})

describe('a custom resource of a million values its schema refuses', { timeout: 120_000 }, () => {
  const WIDGETS = '/apis/bound.example.com/v1/namespaces/default/widgets'
  const schema = (minimum?: number) => ({
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: { note: { type: 'string' }, items: { type: 'array', items: { type: 'integer', ...(minimum ? { minimum } : {}) } } },
      },
    },
  })
  const widget = (name: string, n: number, value: number, extra = '') =>
    `{"apiVersion":"bound.example.com/v1","kind":"Widget","metadata":{"name":"${name}"${extra}},"spec":{"items":[${items(n, String(value))}]}}`
  let api: TestClient
  before(async () => {
    api = await startServer()
    assert.equal((await api.post(CRDS, widgetDefinition('bound.example.com', schema()))).status, 201)
    await eventually('widgets are served', async () => (await api.get(WIDGETS)).status === 200)
  })

  it('keeps the schema\'s first errors on create, counts the rest, and ratchets an update of values stored before the schema changed', async () => {
    const stored = 20_000
    assert.equal((await api.post(WIDGETS, widget('old', stored, 1))).status, 201)
    const crd = (await api.get(`${CRDS}/widgets.bound.example.com`)).body
    crd.spec.versions[0].schema.openAPIV3Schema = schema(5)
    assert.equal((await api.put(`${CRDS}/widgets.bound.example.com`, crd)).status, 200)
    await eventually('the minimum is enforced', async () => (await api.post(WIDGETS, widget('probe', 1, 1))).status === 422)

    const n = 1_000_000
    const r = await api.post(WIDGETS, widget('new', n, 1))
    assert.equal(r.status, 422, r.text.slice(0, 300))
    assert.deepEqual(r.body.details.causes[0], {
      reason: 'FieldValueInvalid',
      message: 'Invalid value: 1: spec.items[0] in body should be greater than or equal to 5',
      field: 'spec.items[0]',
    })
    assert.ok(r.body.details.causes.length <= MAX_FIELD_ERRORS)
    assert.equal(r.body.details.causes.length + notShown(r.body.message), n)
    assert.equal((await api.get(`${WIDGETS}/new`)).status, 404)

    // More unchanged invalid values than the bound: ratcheting drops them all, the update is served.
    const old = (await api.get(`${WIDGETS}/old`)).body
    old.spec.note = 'changed'
    const kept = await api.put(`${WIDGETS}/old`, old)
    assert.equal(kept.status, 200, kept.text.slice(0, 300))
    // Every value changed to another refused one: each counts again.
    const changed = await api.put(`${WIDGETS}/old`, widget('old', stored, 2, `,"resourceVersion":"${kept.body.metadata.resourceVersion}"`))
    assert.equal(changed.status, 422, changed.text.slice(0, 300))
    assert.equal(changed.body.details.causes.length + notShown(changed.body.message), stored)
    assert.deepEqual((await api.get(`${WIDGETS}/old`)).body.spec.items.slice(0, 2), [1, 1])
  })
})

describe('an apply of 750000 duplicate entries', { timeout: 120_000 }, () => {
  it('is refused with upstream\'s 400, its errors listed up to a bound and the rest counted, and stores nothing', async () => {
    const api = await startServer()
    const n = 750_000
    const body = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ap","finalizers":[${items(n, '"!"')}]}}`
    assert.ok(body.length < LIMIT)
    const r = await api.patch(`${CM}/ap?fieldManager=m`, body, 'application/apply-patch+yaml')
    assert.equal(r.status, 400, r.text.slice(0, 300))
    assert.equal(r.body.reason, 'BadRequest')
    const line = '  .metadata.finalizers: duplicate entries for key [="!"]'
    const lines = (r.body.message as string).split('\n')
    assert.equal(lines[0], 'failed to create typed patch object (/ap; /v1, Kind=ConfigMap): errors:')
    assert.deepEqual(lines.slice(1, -1), Array(lines.length - 2).fill(line))
    const m = /^ {2}(\d+) more errors not shown$/.exec(lines.at(-1)!)
    assert.ok(m, lines.at(-1))
    // One error for each entry after the first, all counted.
    assert.equal(lines.length - 2 + Number(m[1]), n - 1)
    assert.ok(r.text.length < body.length, `an answer of ${r.text.length} bytes to a body of ${body.length}`)
    assert.equal((await api.get(`${CM}/ap`)).status, 404)
  })
})

describe('a field manager of 300000 control characters', () => {
  it('is refused with 422 on CreateOptions, every error counted, and stores nothing', async () => {
    const api = await startServer()
    const r = await api.post(`${CM}?fieldManager=${'%01'.repeat(300_000)}`, { metadata: { name: 'managed' } })
    assert.equal(r.status, 422, r.text.slice(0, 300))
    assert.deepEqual(r.body.details.causes[0], { reason: 'FieldValueTooLong', message: 'Too long: may not be more than 128 bytes', field: 'fieldManager' })
    assert.ok(r.body.details.causes.length <= MAX_FIELD_ERRORS)
    // Too long, then one for each character.
    assert.equal(r.body.details.causes.length + notShown(r.body.message), 1 + 300_000)
    assert.equal((await api.get(`${CM}/managed`)).status, 404)
  })

  it('is checked holding at most MAX_FIELD_ERRORS errors', () => {
    const errs = writeOptionErrors(new URLSearchParams({ fieldManager: '\u0001'.repeat(300_000) }))
    assert.equal(errs.length, 1 + 300_000)
    assert.equal(new Set(errs).size, MAX_FIELD_ERRORS + 1)
  })
})

describe('withFieldErrorCap', () => {
  it('keeps the first MAX_FIELD_ERRORS errors as made, the others one placeholder, counted by invalidError', () => {
    const errs = withFieldErrorCap(() => Array.from({ length: 3 * MAX_FIELD_ERRORS }, (_, i) => invalid(fieldPath('items').index(i), i, 'bad')))
    assert.equal(errs.length, 3 * MAX_FIELD_ERRORS)
    // What is held: MAX_FIELD_ERRORS errors and one shared placeholder.
    assert.equal(new Set(errs).size, MAX_FIELD_ERRORS + 1)
    assert.equal(errs[MAX_FIELD_ERRORS - 1]!.field, `items[${MAX_FIELD_ERRORS - 1}]`)
    const status = invalidError('', 'Thing', 'a', errs).toStatus()
    assert.ok(status.details!.causes!.length <= MAX_FIELD_ERRORS)
    assert.equal(status.details!.causes![0]!.field, 'items[0]')
    assert.equal(status.details!.causes!.length + notShown(status.message!), 3 * MAX_FIELD_ERRORS)
  })

  it('bounds nothing outside it, and each run starts afresh', () => {
    const outside = Array.from({ length: MAX_FIELD_ERRORS + 5 }, (_, i) => required(fieldPath('items').index(i)))
    assert.equal(new Set(outside).size, MAX_FIELD_ERRORS + 5)
    for (let run = 0; run < 2; run++) {
      const errs = withFieldErrorCap(() => [required(fieldPath('a')), required(fieldPath('b'))])
      assert.deepEqual(errs.map((e) => e.field), ['a', 'b'])
    }
  })

  it('lifts the bound when the validation throws', () => {
    assert.throws(() =>
      withFieldErrorCap(() => {
        throw new Error('boom')
      }),
    )
    const after = Array.from({ length: MAX_FIELD_ERRORS + 1 }, (_, i) => required(fieldPath('x').index(i)))
    assert.equal(after[MAX_FIELD_ERRORS]!.field, `x[${MAX_FIELD_ERRORS}]`)
  })
})
