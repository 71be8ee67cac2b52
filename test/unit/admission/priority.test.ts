import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { priority } from '../../../core/admission/builtin/priority.js'
import { pods } from '../../../core/resources/core/pods.js'
import { priorityClasses } from '../../../core/resources/groups/scheduling.js'
import { attrs, index, pod, refusal } from './attributes.js'

const classes = [
  { metadata: { name: 'high' }, value: 1000, preemptionPolicy: 'PreemptLowerPriority' },
  { metadata: { name: 'batch' }, value: 10, preemptionPolicy: 'Never' },
]
const withDefault = [...classes, { metadata: { name: 'fallback' }, value: 5, globalDefault: true, preemptionPolicy: 'PreemptLowerPriority' }]

async function admit(list: Record<string, unknown>[], spec: Record<string, unknown>) {
  const a = attrs(pods, 'CREATE', pod(spec))
  await priority(index(list)).admit(a)
  return a.object?.['spec'] as Record<string, unknown>
}

describe('Priority admission', () => {
  const table: [string, Record<string, unknown>[], Record<string, unknown>, Record<string, unknown>][] = [
    ['no class and no default: 0 and PreemptLowerPriority', classes, {}, { priority: 0, preemptionPolicy: 'PreemptLowerPriority' }],
    ["the class's value and policy", classes, { priorityClassName: 'batch' }, { priorityClassName: 'batch', priority: 10, preemptionPolicy: 'Never' }],
    ['the global default class', withDefault, {}, { priorityClassName: 'fallback', priority: 5, preemptionPolicy: 'PreemptLowerPriority' }],
    ['the same priority given as computed', classes, { priorityClassName: 'high', priority: 1000 }, { priorityClassName: 'high', priority: 1000, preemptionPolicy: 'PreemptLowerPriority' }],
  ]
  for (const [what, list, spec, want] of table) {
    it(`sets ${what}`, async () => assert.deepEqual(await admit(list, spec), want))
  }

  const refusals: [string, Record<string, unknown>, string][] = [
    ['an unknown class', { priorityClassName: 'nope' }, 'pods "p" is forbidden: no PriorityClass with name nope was found'],
    [
      'a priority that differs from the class',
      { priorityClassName: 'high', priority: 7 },
      'pods "p" is forbidden: the integer value of priority (7) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name',
    ],
    [
      'a preemption policy that differs from the class',
      { priorityClassName: 'batch', preemptionPolicy: 'PreemptLowerPriority' },
      'pods "p" is forbidden: the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec; priority admission controller computed Never from the given PriorityClass name',
    ],
  ]
  for (const [what, spec, message] of refusals) {
    it(`refuses ${what} with 403`, async () => assert.deepEqual(await refusal(() => admit(classes, spec)), { code: 403, message }))
  }

  it('keeps the values set at creation on an update that leaves them out', async () => {
    const a = attrs(pods, 'UPDATE', pod({}), { oldObject: pod({ priority: 10, preemptionPolicy: 'Never' }) as never })
    await priority(index(classes)).admit(a)
    assert.deepEqual(a.object?.['spec'], { priority: 10, preemptionPolicy: 'Never' })
  })

  it('allows one globalDefault class: a second is refused, the default itself may be updated', async () => {
    const plugin = priority(index(withDefault))
    const second = attrs(priorityClasses, 'CREATE', { metadata: { name: 'other' }, value: 1, globalDefault: true })
    assert.deepEqual(await refusal(() => plugin.validate(second)), {
      code: 403,
      message: 'priorityclasses.scheduling.k8s.io "other" is forbidden: PriorityClass fallback is already marked as default. Only one default can exist',
    })
    const marking = attrs(priorityClasses, 'UPDATE', { metadata: { name: 'high' }, value: 1000, globalDefault: true })
    assert.equal((await refusal(() => plugin.validate(marking)))?.code, 403)
    const same = attrs(priorityClasses, 'UPDATE', { metadata: { name: 'fallback' }, value: 6, globalDefault: true })
    assert.equal(await refusal(() => plugin.validate(same)), undefined)
    assert.equal(await refusal(() => priority(index(classes)).validate(second)), undefined)
  })
})
