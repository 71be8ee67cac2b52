/**
 * A body of 3 MB holds a million empty containers, and each pass over a pod
 * (decoding, defaults, the QoS class, validation) held the serving thread
 * for its whole length: over a second for the validation alone. The passes
 * are written as checkpointed generators; what is counted here is how much
 * of the pod a pass handled between two checkpoints, read off the pod
 * itself at each one, never how long it took.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { errorText, type FieldError } from '../../../core/machinery/field.js'
import { type Checkpointed, isCheckpointed, runAtOnce, UNITS_PER_STEP } from '../../../core/machinery/time-slice.js'
import { pods } from '../../../core/resources/core/pods.js'
import { applyPodDefaultsInSteps } from '../../../core/resources/core/pod-spec-defaults.js'
import { podQOSClass, podQOSClassInSteps } from '../../../core/resources/core/pod-spec-resources.js'
import { decodeAs, decodeAsInSteps } from '../../../core/resources/schema/json-decoding.js'
import { typeForKind, typeTable } from '../../../core/resources/schema/index.js'
import type { KubeObject } from '../../../core/machinery/object.js'
import { applyDeploymentDefaultsInSteps, validateDeploymentInSteps } from '../../../core/resources/apps/deployment.js'
import { applyJobDefaultsInSteps, validateJobInSteps } from '../../../core/resources/batch/job.js'

const CONTAINERS = 50_000
/** A pass may finish the item it is in before its checkpoint: at most a step's units, and one item's own. */
const MOST_ITEMS_BETWEEN_CHECKPOINTS = UNITS_PER_STEP + 1

type Obj = Record<string, any>

function podOf(container: () => Obj, count = CONTAINERS): KubeObject & { spec: Obj } {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' }, spec: { containers: Array.from({ length: count }, container) } }
}

/**
 * Drives `work` to its end; at each checkpoint, `done` tells how many items
 * the pass has handled so far. Gives back the work's value, the number of
 * checkpoints and the most items handled between two of them.
 */
function drive<T>(work: Checkpointed<T>, done: () => number): { value: T; checkpoints: number; mostBetween: number } {
  let checkpoints = 0
  let before = 0
  let mostBetween = 0
  for (;;) {
    const step = work.next()
    const now = done()
    mostBetween = Math.max(mostBetween, now - before)
    before = now
    if (step.done) return { value: step.value, checkpoints, mostBetween }
    checkpoints++
  }
}

const podType = () => typeTable[typeForKind('', 'v1', 'Pod')!.name]!

describe('the passes over a pod of many containers', () => {
  it(`decodes ${CONTAINERS} containers a step at a time, as decoding at once does`, () => {
    const pod = podOf(() => ({ name: null, colour: 'red' }))
    const containers = pod['spec'].containers as Obj[]
    const decoded = () => containers.filter((c) => !('name' in c)).length
    const { value: unknown, checkpoints, mostBetween } = drive(decodeAsInSteps(pod, podType(), typeTable, 'Pod', 'v1'), decoded)
    assert.ok(checkpoints >= Math.floor(CONTAINERS / MOST_ITEMS_BETWEEN_CHECKPOINTS), `${checkpoints} checkpoints`)
    assert.ok(mostBetween <= MOST_ITEMS_BETWEEN_CHECKPOINTS, `${mostBetween} containers between two checkpoints`)
    assert.equal(decoded(), CONTAINERS)
    const atOnce = podOf(() => ({ name: null, colour: 'red' }))
    assert.deepEqual(unknown, decodeAs(atOnce, podType(), typeTable, 'Pod', 'v1'))
    assert.equal(unknown.length, CONTAINERS)
    assert.equal(unknown[1], 'spec.containers[1].colour')
    assert.deepEqual(pod, atOnce)
  })

  it(`still refuses the first value of the wrong type, however far into the list`, () => {
    const pod = podOf(() => ({ name: 'c' }))
    ;(pod['spec'].containers as Obj[])[CONTAINERS - 1]!['image'] = 7
    assert.throws(() => runAtOnce(decodeAsInSteps(pod, podType(), typeTable, 'Pod', 'v1')), {
      message: 'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number into Go struct field Container.spec.containers.image of type string',
    })
  })

  it(`fills the defaults of ${CONTAINERS} containers a step at a time`, () => {
    const pod = podOf(() => ({}))
    const containers = pod['spec'].containers as Obj[]
    const defaulted = () => containers.filter((c) => c['terminationMessagePath'] !== undefined).length
    const { checkpoints, mostBetween } = drive(applyPodDefaultsInSteps(pod), defaulted)
    assert.ok(checkpoints >= Math.floor(CONTAINERS / MOST_ITEMS_BETWEEN_CHECKPOINTS), `${checkpoints} checkpoints`)
    assert.ok(mostBetween <= MOST_ITEMS_BETWEEN_CHECKPOINTS, `${mostBetween} containers between two checkpoints`)
    assert.deepEqual(containers[CONTAINERS - 1], {
      imagePullPolicy: 'IfNotPresent',
      terminationMessagePath: '/dev/termination-log',
      terminationMessagePolicy: 'File',
      resources: {},
    })
  })

  it('copies limits into requests a step at a time, in a container of many resources', () => {
    const limits = Object.fromEntries(Array.from({ length: CONTAINERS }, (_, i) => [`example.com/r${i}`, '1']))
    const pod = podOf(() => ({ name: 'c', image: 'i', resources: { limits } }), 1)
    const container = (pod['spec'].containers as Obj[])[0]!
    const copied = () => Object.keys(container['resources'].requests ?? {}).length
    const { checkpoints } = drive(applyPodDefaultsInSteps(pod), copied)
    assert.ok(checkpoints >= Math.floor(CONTAINERS / MOST_ITEMS_BETWEEN_CHECKPOINTS), `${checkpoints} checkpoints`)
    assert.deepEqual(container['resources'].requests, limits)
  })

  it(`finds the QoS class of ${CONTAINERS} containers with checkpoints, as at once`, () => {
    const pod = podOf(() => ({ name: 'c', image: 'i', resources: { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '1', memory: '1Gi' } } }))
    let checkpoints = 0
    const work = podQOSClassInSteps(pod['spec'])
    let step = work.next()
    for (; !step.done; step = work.next()) checkpoints++
    assert.equal(step.value, 'Guaranteed')
    assert.equal(podQOSClass(pod['spec']), 'Guaranteed')
    assert.ok(checkpoints >= Math.floor(CONTAINERS / MOST_ITEMS_BETWEEN_CHECKPOINTS), `${checkpoints} checkpoints`)
  })

  it(`validates ${CONTAINERS} containers with checkpoints, finding every error in upstream's order`, () => {
    const pod = podOf(() => ({}))
    runAtOnce(applyPodDefaultsInSteps(pod))
    const answer = pods.strategy.validate!(pod, { user: { username: 'u', groups: [] }, now: new Date() })
    assert.ok(isCheckpointed(answer), 'the pod strategy answers with work in steps')
    let checkpoints = 0
    let step = answer.next()
    for (; !step.done; step = answer.next()) checkpoints++
    const errs: FieldError[] = step.value
    assert.ok(checkpoints >= Math.floor((2 * CONTAINERS) / MOST_ITEMS_BETWEEN_CHECKPOINTS), `${checkpoints} checkpoints`)
    // Every name first (validateNames), then each container's own rules.
    assert.equal(errs.length, 2 * CONTAINERS)
    assert.deepEqual(errs.slice(0, 2).map(errorText), ['spec.containers[0].name: Required value', 'spec.containers[1].name: Required value'])
    assert.deepEqual(errs.slice(CONTAINERS, CONTAINERS + 2).map(errorText), [
      'spec.containers[0].image: Required value',
      'spec.containers[1].image: Required value',
    ])
  })

  it(`defaults and validates a Deployment's template of ${CONTAINERS} containers with checkpoints, and a Job's`, () => {
    const template = () => ({ metadata: { labels: { app: 'a' } }, spec: { containers: Array.from({ length: CONTAINERS }, () => ({})) } })
    const deployment: Obj = { metadata: { name: 'd' }, spec: { selector: { matchLabels: { app: 'a' } }, template: template() } }
    const job: Obj = { metadata: { name: 'j', uid: 'u' }, spec: { template: template() } }
    for (const [object, defaults, validation] of [
      [deployment, applyDeploymentDefaultsInSteps, (o: KubeObject) => validateDeploymentInSteps(o, {})],
      [job, applyJobDefaultsInSteps, (o: KubeObject) => validateJobInSteps(o, {})],
    ] as const) {
      const containers = object['spec'].template.spec.containers as Obj[]
      const defaulted = () => containers.filter((c) => c['terminationMessagePolicy'] === 'File').length
      const filled = drive(defaults(object as KubeObject), defaulted)
      assert.ok(filled.mostBetween <= MOST_ITEMS_BETWEEN_CHECKPOINTS, `${filled.mostBetween} containers between two checkpoints`)
      assert.equal(defaulted(), CONTAINERS)
      const checked = drive(validation(object as KubeObject), () => 0)
      assert.ok(checked.checkpoints >= Math.floor((2 * CONTAINERS) / MOST_ITEMS_BETWEEN_CHECKPOINTS), `${checked.checkpoints} checkpoints`)
      assert.deepEqual(
        checked.value.filter((e) => e.field.endsWith('containers[7].name') || e.field.endsWith('containers[7].image')).map(errorText),
        ['spec.template.spec.containers[7].name: Required value', 'spec.template.spec.containers[7].image: Required value'],
      )
    }
  })
})
