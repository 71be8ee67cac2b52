import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { runtimeClassAdmission } from '../../../core/admission/builtin/runtime-class.js'
import { mergeTolerations } from '../../../core/admission/builtin/merge-tolerations.js'
import { StatusError } from '../../../core/machinery/status-error.js'
import { pods } from '../../../core/resources/core/pods.js'
import type { KubeObject } from '../../../core/machinery/object.js'
import { attributes } from './admission-fixture.js'

const classes: Record<string, KubeObject> = {
  kata: { metadata: { name: 'kata' }, handler: 'kata', overhead: { podFixed: { cpu: '250m', memory: '120Mi' } } } as KubeObject,
  gvisor: {
    metadata: { name: 'gvisor' },
    handler: 'runsc',
    scheduling: { nodeSelector: { sandbox: 'gvisor' }, tolerations: [{ key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' }] },
  } as KubeObject,
}
const plugin = runtimeClassAdmission(async (name) => classes[name])
const pod = (spec: Record<string, unknown>): KubeObject => ({ metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'x' }], ...spec } }) as KubeObject

async function refusal(run: () => Promise<void>): Promise<string> {
  try {
    await run()
  } catch (err) {
    assert.ok(err instanceof StatusError)
    assert.equal(err.code, 403)
    assert.equal(err.reason, 'Forbidden')
    return err.message
  }
  return assert.fail('expected a refusal')
}

describe('RuntimeClass admission', () => {
  it('sets the overhead and merges the scheduling of the class', async () => {
    const a = attributes(pods, { object: pod({ runtimeClassName: 'kata' }) })
    await plugin.admit(a)
    assert.deepEqual(a.object?.['spec'] && (a.object['spec'] as Record<string, unknown>)['overhead'], { cpu: '250m', memory: '120Mi' })
    await plugin.validate(a)
    const b = attributes(pods, { object: pod({ runtimeClassName: 'gvisor', nodeSelector: { disk: 'ssd' } }) })
    await plugin.admit(b)
    const spec = b.object?.['spec'] as Record<string, unknown>
    assert.deepEqual(spec['nodeSelector'], { disk: 'ssd', sandbox: 'gvisor' })
    assert.deepEqual(spec['tolerations'], [{ key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' }])
  })

  const refusals: [string, Record<string, unknown>, string][] = [
    ['a missing class', { runtimeClassName: 'nope' }, 'pods "p" is forbidden: pod rejected: RuntimeClass "nope" not found'],
    ['a conflicting overhead', { runtimeClassName: 'kata', overhead: { cpu: '1' } }, `pods "p" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead`],
    [
      'a contradicting node selector',
      { runtimeClassName: 'gvisor', nodeSelector: { sandbox: 'none' } },
      'pods "p" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = gvisor; pod.spec.nodeSelector[sandbox] = none',
    ],
  ]
  for (const [what, spec, message] of refusals)
    it(`refuses ${what} with 403`, async () => {
      assert.equal(await refusal(() => plugin.admit(attributes(pods, { object: pod(spec) })) as Promise<void>), message)
    })

  it('refuses an overhead without a class that defines one, in validation', async () => {
    const message = await refusal(() => plugin.validate(attributes(pods, { object: pod({ overhead: { cpu: '1' } }) })) as Promise<void>)
    assert.equal(message, 'pods "p" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead')
  })

  it('accepts an overhead equal by quantity', async () => {
    const a = attributes(pods, { object: pod({ runtimeClassName: 'kata', overhead: { cpu: '0.25', memory: '120Mi' } }) })
    await plugin.admit(a)
    await plugin.validate(a)
  })
})

describe('mergeTolerations', () => {
  it('drops tolerations another covers and keeps the first of equal ones', () => {
    const exists = { key: 'k', operator: 'Exists' }
    const equal = { key: 'k', operator: 'Equal', value: 'v', effect: 'NoSchedule' }
    assert.deepEqual(mergeTolerations([equal], [exists]), [exists])
    assert.deepEqual(mergeTolerations([exists], [exists]), [exists])
    const timed = { key: 'n', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 10 }
    const longer = { key: 'n', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 }
    // The longer NoExecute toleration covers the shorter one.
    assert.deepEqual(mergeTolerations([timed], [longer]), [longer])
  })
})
