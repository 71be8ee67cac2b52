/**
 * Merge lists of tens of thousands of items: a patch looked every item up by
 * scanning the list, so 30,000 env entries held the server's one thread for
 * tens of seconds. These merge 20,000 items well inside a bound the quadratic
 * code blew by far (about 26 s here), and check order and content against
 * upstream's order rules spelled out for the case.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { applyStrategicMergePatch, applyStrategicMergePatchInSteps } from '../../../core/patch/strategic-merge.js'
import { PatchError } from '../../../core/patch/errors.js'
import { runCounting } from '../../fixtures/checkpoints.js'

const DEPLOYMENT = 'io.k8s.api.apps.v1.Deployment'
const N = 20_000
/** A guard against a hang, not a measure: the merge takes a fraction of a second, the per-item scans took tens of seconds. */
const HANG_GUARD = { timeout: 60_000 }

type Obj = Record<string, unknown>
type Env = { name: string; value?: string }

function deployment(env: Env[]): Obj {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web' },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx:1', env }] } },
    },
  }
}

function containerPatch(container: Obj): Obj {
  return { spec: { template: { spec: { containers: [{ name: 'app', ...container }] } } } }
}

function envOf(result: Obj): Env[] {
  const template = (result.spec as Obj).template as Obj
  const [container] = (template.spec as Obj).containers as [Obj]
  return container.env as Env[]
}

const names = (count: number): string[] => Array.from({ length: count }, (_, i) => `E${i}`)

describe('strategic merge patch of large lists', HANG_GUARD, () => {
  it(`adds ${N} env entries in patch order, server-only entries interleaved by their live place`, () => {
    const original = deployment([{ name: 'KEEP0' }, { name: 'E5', value: 'old' }, { name: 'KEEP1' }])
    const added: Env[] = names(N).map((name, i) => ({ name, value: `v${i}` }))
    // A second E7 merges into the first, as upstream merges duplicates in the patch.
    const result = applyStrategicMergePatch(original, containerPatch({ env: [...added, { name: 'E7', value: 'again' }] }), DEPLOYMENT)
    // KEEP0 comes before E5 in the live list, so before E5 in the result; KEEP1
    // follows E5 there and no later patch item is live, so it goes last.
    const expected = [...added.slice(0, 5), { name: 'KEEP0' }, ...added.slice(5), { name: 'KEEP1' }]
    expected[8] = { name: 'E7', value: 'again' }
    assert.deepEqual(envOf(result), expected)
  })

  it(`orders ${N} env entries by $setElementOrder, with an addition, a deletion and an unlisted entry`, () => {
    const live: Env[] = names(N).map((name) => ({ name, value: name }))
    const order = names(N)
      .filter((name) => name !== 'E3' && name !== 'E10')
      .reverse()
    order.splice(N / 2, 0, 'NEW')
    const patch = containerPatch({
      '$setElementOrder/env': order.map((name) => ({ name })),
      env: [{ name: 'NEW', value: 'n' }, { name: 'E3', $patch: 'delete' }],
    })
    const result = applyStrategicMergePatch(deployment(live), patch, DEPLOYMENT)
    // E10, left out of the order, stays as a server-only entry: it goes before
    // the first listed entry that the live list has after it (E19999), so first.
    const listed = order.map((name) => (name === 'NEW' ? { name, value: 'n' } : { name, value: name }))
    assert.deepEqual(envOf(result), [{ name: 'E10', value: 'E10' }, ...listed])
  })

  it('merges in steps (a patch of megabytes) as at once: maps of many keys, long lists, directives, the same errors', () => {
    const live = { ...deployment(names(5_000).map((name) => ({ name, value: name }))), data: undefined }
    const configMapLive = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', labels: { a: 'b' } }, data: Object.fromEntries(names(20_000).map((n) => [n, 'v'])) }
    const configMapPatch = { metadata: { labels: { a: null, c: 'd' } }, data: Object.fromEntries(names(20_000).map((n, i) => [n, i % 2 ? null : 'w'])), binaryData: { $patch: 'replace', x: 'eA==' } }
    const envPatch = containerPatch({ env: [...names(3_000).map((name) => ({ name, value: 'new' })), { name: 'E4000', $patch: 'delete' }], '$setElementOrder/env': names(5_000).map((name) => ({ name })) })
    for (const [original, patch, type] of [[configMapLive, configMapPatch, 'io.k8s.api.core.v1.ConfigMap'], [live, envPatch, DEPLOYMENT]] as const) {
      const { value: inSteps, checkpoints } = runCounting(applyStrategicMergePatchInSteps(structuredClone(original) as Obj, structuredClone(patch) as Obj, type))
      const atOnce = applyStrategicMergePatch(structuredClone(original) as Obj, structuredClone(patch) as Obj, type)
      assert.deepStrictEqual(inSteps, atOnce)
      assert.equal(JSON.stringify(inSteps), JSON.stringify(atOnce), 'key order')
      assert.ok(checkpoints >= 5, `${checkpoints} checkpoints`)
    }
    // A merged object that does not fit its type: the same error, quoting the patch as it was sent.
    const misfit = { spec: { template: { spec: { containers: 'not a list' } } }, $retainKeys: ['spec'] }
    const messageOf = (run: () => unknown): string => {
      try {
        run()
      } catch (err) {
        assert.ok(err instanceof PatchError, String(err))
        return err.message
      }
      throw new Error('no error')
    }
    const inSteps = messageOf(() => {
      const work = applyStrategicMergePatchInSteps(deployment([]), structuredClone(misfit), DEPLOYMENT)
      while (!work.next().done);
    })
    assert.equal(inSteps, messageOf(() => applyStrategicMergePatch(deployment([]), structuredClone(misfit), DEPLOYMENT)))
    assert.match(inSteps, /retainKeys/)
  })
})
