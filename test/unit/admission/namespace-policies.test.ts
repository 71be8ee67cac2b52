/** PodNodeSelector and PodTolerationRestriction: what a namespace's annotations and the configuration add and allow. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { podNodeSelector } from '../../../core/admission/builtin/pod-node-selector.js'
import { podTolerationRestriction } from '../../../core/admission/builtin/pod-toleration-restriction.js'
import { mergeTolerations } from '../../../core/admission/builtin/tolerations.js'
import { pods } from '../../../core/resources/core/pods.js'
import { attrs, index, pod, refusal } from './attributes.js'

const ns = (name: string, annotations: Record<string, string> = {}) => ({ metadata: { name, annotations } })

describe('PodNodeSelector admission', () => {
  const namespaces = index([ns('default'), ns('gpu', { 'scheduler.alpha.kubernetes.io/node-selector': 'accel=gpu' }), ns('open', { 'scheduler.alpha.kubernetes.io/node-selector': '' })])
  const plugin = podNodeSelector(namespaces, { clusterDefaultNodeSelector: 'zone=a', gpu: 'accel=gpu,disk=ssd' })
  const run = async (namespace: string, nodeSelector?: Record<string, string>) => {
    const a = attrs(pods, 'CREATE', pod(nodeSelector ? { nodeSelector } : {}, { namespace }))
    await plugin.admit(a)
    await plugin.validate(a)
    return (a.object?.['spec'] as Record<string, unknown>)['nodeSelector']
  }
  it("merges the namespace's selector, else the cluster default; an empty annotation means none", async () => {
    assert.deepEqual(await run('default'), { zone: 'a' })
    assert.deepEqual(await run('gpu', { disk: 'ssd' }), { accel: 'gpu', disk: 'ssd' })
    assert.equal(await run('open'), undefined)
  })
  it('refuses a conflicting selector and one outside the namespace’s allowed list, with 403', async () => {
    assert.deepEqual(await refusal(() => run('gpu', { accel: 'tpu' })), {
      code: 403,
      message: 'pods "p" is forbidden: pod node label selector conflicts with its namespace node label selector',
    })
    assert.deepEqual(await refusal(() => run('gpu', { disk: 'hdd' })), {
      code: 403,
      message: 'pods "p" is forbidden: pod node label selector labels conflict with its namespace whitelist',
    })
  })
})

describe('PodTolerationRestriction admission', () => {
  const t = (key: string, extra: Record<string, unknown> = {}) => ({ key, operator: 'Exists', effect: 'NoSchedule', ...extra })
  const namespaces = index([
    ns('default'),
    ns('team', {
      'scheduler.alpha.kubernetes.io/defaultTolerations': JSON.stringify([t('team')]),
      'scheduler.alpha.kubernetes.io/tolerationsWhitelist': JSON.stringify([t('team'), t('node.kubernetes.io/memory-pressure')]),
    }),
  ])
  const plugin = podTolerationRestriction(namespaces, { default: [t('cluster')], whitelist: [t('cluster'), t('node.kubernetes.io/memory-pressure')] })
  const run = async (namespace: string, spec: Record<string, unknown>) => {
    const a = attrs(pods, 'CREATE', pod(spec, { namespace }))
    await plugin.admit(a)
    return (a.object?.['spec'] as Record<string, unknown>)['tolerations']
  }
  it("adds the namespace's default tolerations, else the configuration's, and memory-pressure to a pod that is not BestEffort", async () => {
    assert.deepEqual(await run('team', { containers: [{ name: 'c' }] }), [t('team')])
    assert.deepEqual(await run('default', { containers: [{ name: 'c', resources: { requests: { cpu: '1' } } }] }), [t('cluster'), t('node.kubernetes.io/memory-pressure')])
  })
  it('refuses tolerations outside the allowed list, naming whose list it is', async () => {
    assert.deepEqual(await refusal(() => run('team', { tolerations: [t('other')] })), {
      code: 500,
      message: 'pod tolerations (possibly merged with namespace default tolerations) conflict with its namespace whitelist',
    })
    assert.deepEqual(await refusal(() => run('default', { tolerations: [t('other')] })), {
      code: 500,
      message: 'pod tolerations (possibly merged with namespace default tolerations) conflict with its cluster whitelist',
    })
  })
  it('merges without tolerations another one covers', () => {
    const all = { operator: 'Exists' }
    assert.deepEqual(mergeTolerations([t('a')], [all, t('b')]), [all])
    assert.deepEqual(mergeTolerations([t('a'), t('a')], [t('b')]), [t('a'), t('b')])
    const short = t('n', { effect: 'NoExecute', tolerationSeconds: 10 })
    const long = t('n', { effect: 'NoExecute', tolerationSeconds: 60 })
    assert.deepEqual(mergeTolerations([short], [long]), [long])
  })
})
