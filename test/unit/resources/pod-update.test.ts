import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { applyPodDefaultsInSteps } from '../../../core/resources/core/pod-spec-defaults.js'
import { runAtOnce } from '../../../core/machinery/time-slice.js'
import { POD_UPDATE_FORBIDDEN, validatePodSpecUpdate } from '../../../core/resources/core/pod-spec-update.js'
import { errorText, fieldPath } from '../../../core/machinery/field.js'

type Spec = Record<string, any>

function created(extra: Spec = {}): Spec {
  const pod = { spec: { containers: [{ name: 'app', image: 'nginx:1.27' }], ...extra } }
  runAtOnce(applyPodDefaultsInSteps(pod))
  return pod.spec
}

/** What a user updating the pod created with `before` is told after `change`. */
function problems(change: (spec: Spec) => void, before: Spec = {}): string[] {
  const old = created(before)
  const next = structuredClone(old)
  change(next)
  return validatePodSpecUpdate(next, old, fieldPath('spec')).map(errorText)
}

const allowed: [string, (s: Spec) => void, Spec?][] = [
  ["a container's image", (s) => (s.containers[0].image = 'nginx:1.28')],
  ['an active deadline where there was none', (s) => (s.activeDeadlineSeconds = 60)],
  ['a shorter active deadline', (s) => (s.activeDeadlineSeconds = 30), { activeDeadlineSeconds: 60 }],
  ['an added toleration', (s) => (s.tolerations = [{ key: 'gpu', operator: 'Exists' }])],
  ['a removed scheduling gate', (s) => (s.schedulingGates = []), { schedulingGates: [{ name: 'wait' }] }],
  ['a negative grace period raised to 1', (s) => (s.terminationGracePeriodSeconds = 1), { terminationGracePeriodSeconds: -1 }],
]

const refused: [string, (s: Spec) => void, string[], Spec?][] = [
  [
    'an added container',
    (s) => s.containers.push({ name: 'sidecar', image: 'envoy:1' }),
    ['spec.containers: Forbidden: pod updates may not add or remove containers'],
  ],
  [
    'a longer active deadline',
    (s) => (s.activeDeadlineSeconds = 90),
    ['spec.activeDeadlineSeconds: Invalid value: 90: must be less than or equal to previous value'],
    { activeDeadlineSeconds: 60 },
  ],
  [
    'a removed active deadline',
    (s) => delete s.activeDeadlineSeconds,
    ['spec.activeDeadlineSeconds: Invalid value: "null": must not update from a positive integer to nil value'],
    { activeDeadlineSeconds: 60 },
  ],
  [
    'a removed toleration',
    (s) => (s.tolerations = []),
    ['spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds'],
    { tolerations: [{ key: 'gpu', operator: 'Exists' }] },
  ],
  [
    'an added scheduling gate',
    (s) => (s.schedulingGates = [{ name: 'later' }]),
    ["spec.schedulingGates: Forbidden: only deletion is allowed, but found new scheduling gate 'later'"],
  ],
  [
    'a changed restart policy',
    (s) => (s.restartPolicy = 'Never'),
    [`spec: Forbidden: ${POD_UPDATE_FORBIDDEN}\n  - spec.restartPolicy: "Always"\n  + spec.restartPolicy: "Never"`],
  ],
  [
    "a container's new environment",
    (s) => (s.containers[0].env = [{ name: 'A', value: '1' }]),
    [`spec: Forbidden: ${POD_UPDATE_FORBIDDEN}\n  - spec.containers[0].env: null\n  + spec.containers[0].env: [{"name":"A","value":"1"}]`],
  ],
]

describe('pod updates', () => {
  for (const [what, change, before] of allowed) it(`allow ${what}`, () => assert.deepEqual(problems(change, before), []))
  for (const [what, change, expected, before] of refused)
    it(`refuse ${what}`, () => assert.deepEqual(problems(change, before), expected))

  it('name the fields that may change, as upstream words it', () => {
    assert.equal(
      POD_UPDATE_FORBIDDEN,
      'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
    )
  })
})
