import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { ManagedFieldsEntry } from '../../../core/apply/index.js'
import { StatusError } from '../../../core/machinery/status-error.js'
import { applyConfiguration, recordUpdate } from '../../../core/registry/managed-fields.js'
import { patchTypes, readPatch } from '../../../core/endpoints/patch-request.js'
import type { RequestContext } from '../../../core/registry/request-context.js'
import type { ResourceEntry } from '../../../core/resources/catalogue.js'
import type { KubeObject } from '../../../core/machinery/object.js'
import { API_VERSION, cronTab, cronTabSchema, TYPE_NAME } from './crd-fixtures.js'

/** Only what the managed-fields and patch code read of a custom resource's entry. */
const entry = (withStatus: boolean): ResourceEntry =>
  ({
    group: 'stable.example.com',
    version: 'v1',
    kind: 'CronTab',
    resource: 'crontabs',
    typeName: TYPE_NAME,
    schema: cronTabSchema,
    subresources: withStatus ? [{ name: 'status', kind: 'CronTab', verbs: ['get', 'patch', 'update'] }] : [],
  }) as unknown as ResourceEntry

const ctx = (fieldManager: string, extra: Partial<RequestContext> = {}): RequestContext => ({
  user: { username: 'u', groups: [] },
  now: new Date('2024-05-01T10:00:00Z'),
  dryRun: false,
  fieldManager,
  ...extra,
})

const fieldsV1 = (obj: KubeObject): unknown[] =>
  ((obj.metadata.managedFields ?? []) as ManagedFieldsEntry[]).map((e) => [e.manager, e.fieldsV1])

async function thrown(fn: () => Promise<unknown>): Promise<StatusError> {
  try {
    await fn()
  } catch (err) {
    if (err instanceof StatusError) return err
    throw err
  }
  assert.fail('expected a StatusError')
}

describe('managedFields and patch types of custom resources in the registry', () => {
  it('accepts JSON patch, merge patch and apply, and refuses strategic merge with 415 listing them in upstream order', async () => {
    assert.deepEqual(patchTypes(entry(true)), ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml'])
    const request = new Request('http://x/apis/stable.example.com/v1/namespaces/default/crontabs/ct', {
      method: 'PATCH',
      headers: { 'content-type': 'application/strategic-merge-patch+json' },
      body: '{}',
    })
    const err = await readPatch(request, entry(true), 1 << 20, ctx('m')).then(
      () => assert.fail('expected a 415'),
      (e: unknown) => e as StatusError,
    )
    assert.equal(err.code, 415)
    assert.equal(
      err.message,
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
    )
  })

  it('records Update entries from the schema, status left out through the main resource only when the status subresource exists', async () => {
    const obj = cronTab({ replicas: 1 }, { status: { ready: true } }) as unknown as KubeObject
    const withSub = structuredClone(obj)
    await recordUpdate(entry(true), API_VERSION, withSub, undefined, ctx('creator'))
    assert.deepEqual(fieldsV1(withSub), [['creator', { 'f:spec': { '.': {}, 'f:replicas': {} } }]])
    const without = structuredClone(obj)
    await recordUpdate(entry(false), API_VERSION, without, undefined, ctx('creator'))
    assert.deepEqual(fieldsV1(without), [['creator', { 'f:spec': { '.': {}, 'f:replicas': {} }, 'f:status': { '.': {}, 'f:ready': {} } }]])
    // through the status subresource the spec is nobody's
    const status = structuredClone(withSub)
    status.status = { ready: false }
    await recordUpdate(entry(true), API_VERSION, status, withSub, ctx('kubelet'), 'status')
    assert.deepEqual(fieldsV1(status)[1], ['kubelet', { 'f:status': { 'f:ready': {} } }])
  })

  it('applies with conflicts as a 409 and answers an undeclared field as upstream does for custom resources: 500 without a reason', async () => {
    const live = await applyConfiguration(entry(true), API_VERSION, undefined, cronTab({ replicas: 1 }), ctx('a', { apply: { force: false } }))
    assert.deepEqual(fieldsV1(live), [['a', { 'f:spec': { 'f:replicas': {} } }]])
    live.metadata.uid = 'u1'

    const conflict = await thrown(() => applyConfiguration(entry(true), API_VERSION, live, cronTab({ replicas: 2 }), ctx('b', { apply: { force: false } })))
    assert.equal(conflict.code, 409)
    assert.equal(conflict.message, 'Apply failed with 1 conflict: conflict with "a": .spec.replicas')

    const undeclared = await thrown(() => applyConfiguration(entry(true), API_VERSION, live, cronTab({ foo: 1 }), ctx('b', { apply: { force: false } })))
    assert.equal(undeclared.code, 500)
    const status = undeclared.toStatus()
    assert.equal(status.message, 'failed to create typed patch object (default/ct; stable.example.com/v1, Kind=CronTab): .spec.foo: field not declared in schema')
    assert.equal('reason' in status, false)

    const wrongVersion = await thrown(() => applyConfiguration(entry(true), API_VERSION, live, { ...cronTab({}), apiVersion: 'stable.example.com/v2' }, ctx('b', { apply: { force: false } })))
    assert.equal(wrongVersion.code, 400)
  })
})
