import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  applyDaemonSetDefaultsInSteps,
  prepareDaemonSetForCreate,
  prepareDaemonSetForUpdate,
  validateDaemonSetInSteps,
} from '../../../core/resources/apps/daemonset.js'
import { applyDeploymentDefaultsInSteps, validateDeploymentInSteps } from '../../../core/resources/apps/deployment.js'
import { applyReplicaSetDefaultsInSteps, validateReplicaSetInSteps } from '../../../core/resources/apps/replicaset.js'
import { semanticEqual } from '../../../core/resources/apps/selector.js'
import { applyStatefulSetDefaultsInSteps, validateStatefulSetInSteps, validateStatefulSetUpdateInSteps } from '../../../core/resources/apps/statefulset.js'
import type { PodSpecValidationOptions } from '../../../core/resources/core/pod-spec-validation.js'
import type { KubeObject } from '../../../core/machinery/object.js'
import { errorText, type FieldError } from '../../../core/machinery/field.js'
import { runAtOnce } from '../../../core/machinery/time-slice.js'

// The kinds' passes at once, as the registry runs them for an object of ordinary size.
const applyDaemonSetDefaults = (ds: KubeObject) => runAtOnce(applyDaemonSetDefaultsInSteps(ds))
const validateDaemonSet = (ds: KubeObject, opts: PodSpecValidationOptions) => runAtOnce(validateDaemonSetInSteps(ds, opts))
const applyDeploymentDefaults = (d: KubeObject) => runAtOnce(applyDeploymentDefaultsInSteps(d))
const validateDeployment = (d: KubeObject, opts: PodSpecValidationOptions) => runAtOnce(validateDeploymentInSteps(d, opts))
const applyReplicaSetDefaults = (rs: KubeObject) => runAtOnce(applyReplicaSetDefaultsInSteps(rs))
const validateReplicaSet = (rs: KubeObject, opts: PodSpecValidationOptions) => runAtOnce(validateReplicaSetInSteps(rs, opts))
const applyStatefulSetDefaults = (sts: KubeObject) => runAtOnce(applyStatefulSetDefaultsInSteps(sts))
const validateStatefulSet = (sts: KubeObject) => runAtOnce(validateStatefulSetInSteps(sts))
const validateStatefulSetUpdate = (sts: KubeObject, old: KubeObject) => runAtOnce(validateStatefulSetUpdateInSteps(sts, old))

type Spec = Record<string, unknown>

const podTemplate = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] } }
const base = (spec: Spec): KubeObject => ({ metadata: { name: 'x', uid: 'u1' }, spec: { selector: { matchLabels: { app: 'web' } }, template: structuredClone(podTemplate), ...spec } })

/** What a user creating the object is told, with the defaults applied first as the server does. */
function problems(obj: KubeObject, defaults: (o: KubeObject) => void, validate: (o: KubeObject) => FieldError[]): string[] {
  defaults(obj)
  return validate(obj).map(errorText)
}

describe('Deployment rules', () => {
  const check = (spec: Spec) => problems(base(spec), applyDeploymentDefaults, (d) => validateDeployment(d, {}))

  it('accepts a plain deployment, and Recreate without rollingUpdate', () => {
    assert.deepEqual(check({}), [])
    assert.deepEqual(check({ strategy: { type: 'Recreate' } }), [])
  })

  it('keeps the given rollout bounds and fills only the missing one', () => {
    const d = base({ strategy: { rollingUpdate: { maxSurge: 2 } } })
    applyDeploymentDefaults(d)
    assert.deepEqual((d['spec'] as Spec)['strategy'], { type: 'RollingUpdate', rollingUpdate: { maxSurge: 2, maxUnavailable: '25%' } })
  })

  it('refuses a malformed percentage, one above 100%, and an unknown strategy type', () => {
    assert.deepEqual(check({ strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '150%', maxSurge: 'half' } } }), [
      `spec.strategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"half"}: a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')`,
      'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"150%"}: must not be greater than 100%',
    ])
    assert.deepEqual(check({ strategy: { type: 'BlueGreen' } }), [
      'spec.strategy: Unsupported value: apps.DeploymentStrategy{Type:"BlueGreen", RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}: supported values: "Recreate", "RollingUpdate"',
    ])
  })

  it('refuses a bad label key in the selector and, as upstream, checks the template only once the selector parses', () => {
    const errs = check({ selector: { matchLabels: { 'bad key': 'web' } }, template: { ...podTemplate, metadata: { labels: { 'bad key': 'web' } } } })
    assert.equal(errs.length, 2)
    assert.match(errs[0] ?? '', /^spec\.selector\.matchLabels: Invalid value: "bad key": name part must consist of alphanumeric characters/)
    assert.equal(
      errs[1],
      'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"bad key":"web"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: invalid label selector',
    )
  })
})

describe('ReplicaSet rules', () => {
  it('refuses an empty selector with upstream’s wording, which names a deployment', () => {
    assert.deepEqual(problems(base({ selector: {} }), applyReplicaSetDefaults, (rs) => validateReplicaSet(rs, {})), [
      'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment',
    ])
  })

  it('refuses an invalid pod template with the pod spec’s own causes', () => {
    const errs = problems(base({ template: { metadata: { labels: { app: 'web' } }, spec: { containers: [] } } }), applyReplicaSetDefaults, (rs) => validateReplicaSet(rs, {}))
    assert.deepEqual(errs, ['spec.template.spec.containers: Required value'])
  })
})

describe('StatefulSet rules', () => {
  const check = (spec: Spec) => problems(base(spec), applyStatefulSetDefaults, validateStatefulSet)

  it('accepts OnDelete, and leaves its rollingUpdate undefaulted', () => {
    const sts = base({ updateStrategy: { type: 'OnDelete' } })
    applyStatefulSetDefaults(sts)
    assert.deepEqual((sts['spec'] as Spec)['updateStrategy'], { type: 'OnDelete' })
    assert.deepEqual(validateStatefulSet(sts), [])
  })

  it('refuses rollingUpdate with OnDelete, a zero maxUnavailable, and a bad retention policy', () => {
    assert.deepEqual(check({ updateStrategy: { type: 'OnDelete', rollingUpdate: { partition: 2 } } }), [
      "spec.updateStrategy.rollingUpdate: Invalid value: apps.RollingUpdateStatefulSetStrategy{Partition:2, MaxUnavailable:(*intstr.IntOrString)(nil)}: only allowed for updateStrategy 'RollingUpdate'",
    ])
    assert.deepEqual(check({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0 } } }), [
      'spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:""}: cannot be 0',
    ])
    assert.deepEqual(check({ persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Keep' } }), [
      'spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: "Keep": supported values: "Retain", "Delete"',
    ])
  })

  it('does not validate the template’s pod spec, as upstream, but its restart policy and deadline', () => {
    assert.deepEqual(check({ template: { metadata: { labels: { app: 'web' } }, spec: { containers: [], restartPolicy: 'OnFailure', activeDeadlineSeconds: 5 } } }), [
      'spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"',
      'spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in StatefulSet is not Supported',
    ])
  })

  it('allows minReadySeconds and the retention policy to change on update, not the claim templates', () => {
    const old = base({})
    applyStatefulSetDefaults(old)
    const next = structuredClone(old)
    Object.assign(next['spec'] as Spec, { minReadySeconds: 10, persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' } })
    assert.deepEqual(validateStatefulSetUpdate(next, old), [])
    ;(next['spec'] as Spec)['volumeClaimTemplates'] = [{ metadata: { name: 'data' } }]
    assert.equal(validateStatefulSetUpdate(next, old).length, 1)
  })
})

describe('DaemonSet rules', () => {
  it('reports an absent selector only through the template mismatch, as upstream', () => {
    const ds: KubeObject = { metadata: { name: 'x' }, spec: { template: structuredClone(podTemplate) } }
    assert.deepEqual(problems(ds, applyDaemonSetDefaults, (d) => validateDaemonSet(d, {})), [
      'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`',
    ])
  })

  it('requires one non-zero rollout bound', () => {
    const errs = problems(base({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 0 } } }), applyDaemonSetDefaults, (d) => validateDaemonSet(d, {}))
    assert.deepEqual(errs, ['spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0'])
  })

  it('keeps a client’s higher template generation on create and counts from the stored one on update', () => {
    const ds = base({})
    ds.metadata.annotations = { 'deprecated.daemonset.template.generation': '4' }
    prepareDaemonSetForCreate(ds)
    assert.equal(ds.metadata.annotations['deprecated.daemonset.template.generation'], '4')
    const next = structuredClone(ds)
    next.metadata.annotations = { 'deprecated.daemonset.template.generation': '9' }
    prepareDaemonSetForUpdate(next, ds)
    assert.equal(next.metadata.annotations['deprecated.daemonset.template.generation'], '4')
  })
})

describe('semantic equality', () => {
  it('treats empty lists and maps as absent, as upstream’s comparison does', () => {
    assert.equal(semanticEqual({ a: [], b: {}, c: null, d: 1 }, { d: 1 }), true)
    assert.equal(semanticEqual({ a: [1] }, { a: [2] }), false)
  })
})
