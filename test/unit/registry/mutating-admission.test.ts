/**
 * The store's mutating admission step: it runs after managedFields are
 * recorded (what it sets is nobody's), and upstream's validating wrapper puts
 * back managedFields that a step left unreadable, with upstream's warning.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { emptyAdmissionChain } from '../../../core/admission/chain.js'
import { defaultTolerationSeconds } from '../../../core/admission/builtin/default-toleration-seconds.js'
import { priority } from '../../../core/admission/builtin/priority.js'
import { serviceAccount } from '../../../core/admission/builtin/service-account.js'
import { type MutatingAdmission, mutatingChain } from '../../../core/admission/mutating.js'
import type { RequestContext } from '../../../core/registry/request-context.js'
import { ResourceStore } from '../../../core/registry/store.js'
import { configMaps } from '../../../core/resources/core/configmaps.js'
import { pods } from '../../../core/resources/core/pods.js'
import type { ResourceEntry } from '../../../core/resources/catalogue.js'
import type { KubeObject } from '../../../core/machinery/object.js'
import { MemoryStorage } from '../../../core/storage/memory.js'
import { index } from '../admission/attributes.js'

const NOW = new Date('2026-01-02T03:04:05Z')

function context(): RequestContext {
  return { user: { username: 'admin', groups: ['system:masters'] }, now: NOW, dryRun: false, fieldManager: 'writer', fieldValidation: 'Strict' }
}

function storeFor(entry: ResourceEntry, mutatingAdmission?: MutatingAdmission): ResourceStore {
  return new ResourceStore(entry, new MemoryStorage(), '/registry', mutatingAdmission ? { admission: { mutating: mutatingAdmission, validating: emptyAdmissionChain.validating } } : {})
}

/** A plugin that writes into every object it sees, and does `also` on top. */
function labeller(also: (obj: KubeObject) => void = () => {}): MutatingAdmission {
  return {
    name: 'Labeller',
    handles: () => true,
    admit(a) {
      if (!a.object) return
      a.object.metadata.labels = { ...a.object.metadata.labels, admitted: 'yes' }
      also(a.object)
    },
  }
}

const configMap = (data: Record<string, string>) => ({ metadata: { name: 'cfg' }, data })

describe('the mutating admission step', () => {
  it('runs after ownership is recorded: what it sets is owned by no one, on create and update', async () => {
    const store = storeFor(configMaps, labeller())
    const created = await store.create('default', configMap({ a: '1' }), context())
    assert.equal(created.metadata.labels?.['admitted'], 'yes')
    assert.deepEqual(created.metadata.managedFields, [
      { manager: 'writer', operation: 'Update', apiVersion: 'v1', time: '2026-01-02T03:04:05Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { '.': {}, 'f:a': {} } } },
    ])
    const updated = await store.update('default', 'cfg', (current) => ({ ...current, data: { a: '2' } }), context())
    assert.deepEqual(updated.metadata.managedFields?.map((e) => (e as { fieldsV1: unknown }).fieldsV1), [{ 'f:data': { '.': {}, 'f:a': {} } }])
  })

  it('puts back managedFields a step left unreadable, and warns as upstream', async () => {
    const broken = labeller((obj) => {
      obj.metadata.managedFields = [{ manager: 'rogue', operation: 'Rewrite', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: {} }]
    })
    const store = storeFor(configMaps, broken)
    const ctx = context()
    const created = await store.create('default', configMap({ a: '1' }), ctx)
    assert.deepEqual(created.metadata.managedFields?.map((e) => (e as { manager: string }).manager), ['writer'])
    assert.deepEqual(ctx.warnings, [
      '.metadata.managedFields was in an invalid state after admission; this could be caused by an outdated mutating admission controller; please fix your requests: operation must be `Apply` or `Update`',
    ])
    assert.deepEqual((await store.get('default', 'cfg')).metadata.managedFields, created.metadata.managedFields)
  })

  it('keeps a readable rewrite of managedFields, without a warning', async () => {
    const entry = { manager: 'admission', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { 'f:admitted': {} } } } }
    const store = storeFor(
      configMaps,
      labeller((obj) => {
        obj.metadata.managedFields = [...(obj.metadata.managedFields ?? []), entry]
      }),
    )
    const ctx = context()
    const created = await store.create('default', configMap({ a: '1' }), ctx)
    assert.deepEqual(created.metadata.managedFields?.map((e) => (e as { manager: string }).manager), ['writer', 'admission'])
    assert.equal(ctx.warnings?.length ?? 0, 0)
  })

  it('refuses the write when a step refuses it, and stores nothing', async () => {
    const refusing: MutatingAdmission = {
      name: 'Refuser',
      handles: (op) => op === 'CREATE',
      admit() {
        throw new Error('refused by admission')
      },
    }
    const store = storeFor(configMaps, refusing)
    await assert.rejects(store.create('default', configMap({ a: '1' }), context()), /refused by admission/)
    await assert.rejects(store.get('default', 'cfg'), (err: { code?: number }) => err.code === 404)
  })
})

describe('the pod plugins of the default set, in the store', () => {
  const pod = { metadata: { name: 'p' }, spec: { automountServiceAccountToken: false, containers: [{ name: 'app', image: 'nginx' }] } }
  const defaults = mutatingChain('defaults', [
    serviceAccount(index([{ metadata: { name: 'default', namespace: 'default' } }])),
    priority(index([])),
    defaultTolerationSeconds(),
  ])

  it('set service account, priority and tolerations after ownership is recorded', async () => {
    const store = storeFor(pods, defaults)
    const created = await store.create('default', structuredClone(pod), context())
    const spec = created['spec'] as Record<string, unknown>
    assert.equal(spec['serviceAccountName'], 'default')
    assert.equal(spec['serviceAccount'], 'default')
    assert.equal(spec['priority'], 0)
    assert.equal(spec['preemptionPolicy'], 'PreemptLowerPriority')
    assert.deepEqual(spec['tolerations'], [
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    ])
    const owned = JSON.stringify(created.metadata.managedFields)
    for (const field of ['serviceAccountName', 'serviceAccount', 'priority', 'preemptionPolicy', 'tolerations']) assert.ok(!owned.includes(`"f:${field}"`), field)
  })

  it('keep a stored priority and the tolerations when an update leaves them out', async () => {
    const store = storeFor(pods, defaults)
    await store.create('default', structuredClone(pod), context())
    const updated = await store.update(
      'default',
      'p',
      (current) => {
        const spec = { ...(current['spec'] as Record<string, unknown>) }
        delete spec['priority']
        delete spec['preemptionPolicy']
        delete spec['tolerations']
        return { ...current, spec }
      },
      context(),
    )
    const spec = updated['spec'] as Record<string, unknown>
    assert.equal(spec['priority'], 0)
    assert.equal(spec['preemptionPolicy'], 'PreemptLowerPriority')
    assert.equal((spec['tolerations'] as unknown[]).length, 2)
  })

  it('leave a pod that already tolerates every NoExecute taint alone', async () => {
    const store = storeFor(pods, defaults)
    const tolerant = { ...structuredClone(pod), spec: { ...pod.spec, tolerations: [{ operator: 'Exists' }] } }
    const created = await store.create('default', tolerant, context())
    assert.deepEqual((created['spec'] as Record<string, unknown>)['tolerations'], [{ operator: 'Exists' }])
  })
})
