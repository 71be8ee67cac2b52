import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { AdmissionAttributes } from '../../../core/admission/attributes.js'
import { validatingChain, type ValidatingAdmission } from '../../../core/admission/validating.js'
import type { KubeObject } from '../../../core/machinery/object.js'
import { markedLarge } from '../../../core/machinery/large-objects.js'
import { countTurns } from '../../helpers/event-loop-turns.js'
import { runValidatingAdmission } from '../../../core/registry/admission-step.js'
import type { RequestContext } from '../../../core/registry/request-context.js'
import type { ResourceEntry } from '../../../core/resources/catalogue.js'

const entry = { resource: 'configmaps' } as unknown as ResourceEntry
const ctx: RequestContext = { user: { username: 'alice', groups: [] }, now: new Date(), dryRun: false }

const dataOf = (obj: KubeObject | undefined): Record<string, string> => (obj as unknown as { data: Record<string, string> }).data

function plugin(name: string, validate: (a: AdmissionAttributes) => void | Promise<void>): ValidatingAdmission {
  return { name, handles: () => true, validate }
}

describe('the validating admission step', () => {
  it('hands plugins one copy of the object and of the old one: what they change never reaches the write', async () => {
    const object: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns' }, data: { k: 'new' } }
    const old: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns' }, data: { k: 'old' } }
    const seen: KubeObject[] = []
    const chain = validatingChain('test', [
      plugin('first', (a) => {
        assert.equal(a.name, 'a')
        assert.equal(a.namespace, 'ns')
        assert.notEqual(a.object, object)
        assert.deepEqual(a.object, object)
        assert.deepEqual(a.oldObject, old)
        dataOf(a.object)['k'] = 'changed'
        dataOf(a.oldObject)['k'] = 'changed'
        seen.push(a.object!)
      }),
      plugin('second', async (a) => {
        await Promise.resolve()
        // The same copy as the plugin before saw (upstream passes one copy down the chain).
        assert.equal(a.object, seen[0])
        assert.equal(dataOf(a.object)['k'], 'changed')
        assert.equal(dataOf(a.oldObject)['k'], 'changed')
      }),
    ])
    await runValidatingAdmission(chain, entry, { operation: 'UPDATE', object, old }, ctx)
    assert.equal(dataOf(object)['k'], 'new')
    assert.equal(dataOf(old)['k'], 'old')
  })

  it('passes a refusal through', async () => {
    const chain = validatingChain('test', [
      plugin('refuses', () => {
        throw new Error('no')
      }),
    ])
    await assert.rejects(runValidatingAdmission(chain, entry, { operation: 'CREATE', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'b' } } }, ctx), /no/)
  })

  // A plugin reads its copy synchronously: for an object of megabytes (every pod is read by the built-in plugins) that
  // copy was one piece of half a second. What is counted is whether the event loop ran before the first plugin.
  it('copies a large object ahead, letting the event loop run, and a small one on the first read', async () => {
    const large = markedLarge<KubeObject>({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'l' }, data: Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, 'v'])) })
    const small: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 's' }, data: { k: 'v' } }
    for (const [object, ranFirst] of [[large, true], [small, false]] as const) {
      const counter = countTurns()
      let turnsBeforePlugin = -1
      const chain = validatingChain('test', [
        plugin('reads', (a) => {
          turnsBeforePlugin = counter.turns
          assert.notEqual(a.object, object)
          assert.deepEqual(a.object, object)
        }),
      ])
      await runValidatingAdmission(chain, entry, { operation: 'CREATE', object }, ctx)
      counter.stop()
      assert.equal(turnsBeforePlugin > 0, ranFirst, `${turnsBeforePlugin} turns before the plugin for ${object.metadata.name}`)
    }
  })
})
