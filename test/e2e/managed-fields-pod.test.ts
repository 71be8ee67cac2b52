/**
 * managedFields as upstream records them for a pod driven by kubectl:
 * client-side apply, the move to server-side apply (kubectl folds
 * `kubectl-client-side-apply` into its own entry and applies again), a
 * change, and the move back. What admission sets (service account,
 * priority, tolerations) is owned by no manager at any step.
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { Daemon } from './daemon.js'
import { assertEntries, LAST_APPLIED, manifest, type Obj, paths, read, step, timeOf, useDaemon } from './managed-fields.js'

let d: Daemon

before(async () => {
  d = await Daemon.start()
  useDaemon(d)
})

after(async () => {
  assert.equal(await d.stop(), 0, 'the daemon exits 0 on SIGTERM')
})

describe('a pod moved from client-side to server-side apply and back', () => {
  const pod = (labels: string, image = 'nginx:1.27') => `apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {${labels}}
spec:
  containers:
  - name: app
    image: ${image}
`
  const container = (...fields: string[]) => ({
    'f:containers': { 'k:{"name":"app"}': Object.fromEntries(['.', ...fields].map((f) => [f === '.' ? '.' : `f:${f}`, {}])) },
  })
  /** What admission sets on a pod (ServiceAccount, Priority, DefaultTolerationSeconds): nobody's. */
  const admitted = ['serviceAccountName', 'serviceAccount', 'priority', 'preemptionPolicy', 'tolerations']
  const assertAdmittedOwnedByNoOne = (obj: Obj): void => {
    for (const e of obj.metadata.managedFields ?? [])
      for (const field of admitted) assert.ok(!paths(e.fieldsV1).includes(`f:spec.f:${field}`), `${e.manager} owns spec.${field}`)
  }

  it('creates it with kubectl apply: the defaulted fields are the applier\'s, the admitted ones nobody\'s', async () => {
    await step('pod/web created\n', 'apply', '-f', manifest('pod-1.yaml', pod('app: web')))
    const obj = await read('pod', 'web')
    assertEntries(obj, [
      {
        manager: 'kubectl-client-side-apply',
        operation: 'Update',
        apiVersion: 'v1',
        time: true,
        fieldsV1: {
          'f:metadata': {
            'f:annotations': { '.': {}, 'f:kubectl.kubernetes.io/last-applied-configuration': {} },
            'f:labels': { '.': {}, 'f:app': {} },
          },
          'f:spec': {
            ...container('image', 'imagePullPolicy', 'name', 'resources', 'terminationMessagePath', 'terminationMessagePolicy'),
            'f:dnsPolicy': {},
            'f:enableServiceLinks': {},
            'f:restartPolicy': {},
            'f:schedulerName': {},
            'f:securityContext': {},
            'f:terminationGracePeriodSeconds': {},
          },
        },
      },
    ])
    const spec = obj['spec'] as Record<string, unknown>
    assert.equal(spec['serviceAccountName'], 'default')
    assert.equal(spec['priority'], 0)
    assert.equal((spec['tolerations'] as unknown[]).length, 2)
    assertAdmittedOwnedByNoOne(obj)
  })

  it('moves to --server-side with a changed label: kubectl then owns only what the file holds', async () => {
    await step('pod/web serverside-applied\n', 'apply', '--server-side', '-f', manifest('pod-2.yaml', pod('app: web, tier: front')))
    const obj = await read('pod', 'web')
    assertEntries(obj, [
      { manager: 'kubectl-last-applied', operation: 'Apply', apiVersion: 'v1', time: false, fieldsV1: LAST_APPLIED },
      {
        manager: 'kubectl',
        operation: 'Apply',
        apiVersion: 'v1',
        time: true,
        fieldsV1: { 'f:metadata': { 'f:labels': { 'f:app': {}, 'f:tier': {} } }, 'f:spec': container('image', 'name') },
      },
    ])
    assertAdmittedOwnedByNoOne(obj)
    // The server keeps the annotation in step with what kubectl applied, for a later client-side apply.
    const annotation = JSON.parse(obj.metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration'] ?? '{}')
    assert.deepEqual(annotation.metadata.labels, { app: 'web', tier: 'front' })
    // Applying the same file again changes nothing.
    await step('pod/web serverside-applied\n', 'apply', '--server-side', '-f', join(d.dir, 'pod-2.yaml'))
    assert.deepEqual((await read('pod', 'web')).metadata.managedFields, obj.metadata.managedFields)
  })

  it('changes the image server-side, then moves back to client-side apply', async () => {
    await step('pod/web serverside-applied\n', 'apply', '--server-side', '-f', manifest('pod-3.yaml', pod('app: web, tier: front', 'nginx:1.28')))
    const applied = assertEntries(await read('pod', 'web'), [
      { manager: 'kubectl-last-applied', operation: 'Apply', apiVersion: 'v1', time: false, fieldsV1: LAST_APPLIED },
      {
        manager: 'kubectl',
        operation: 'Apply',
        apiVersion: 'v1',
        time: true,
        fieldsV1: { 'f:metadata': { 'f:labels': { 'f:app': {}, 'f:tier': {} } }, 'f:spec': container('image', 'name') },
      },
    ])

    // Client-side apply diffs against the annotation the server kept: the label goes, the image changes.
    await step('pod/web configured\n', 'apply', '-f', manifest('pod-4.yaml', pod('app: web', 'nginx:1.29')))
    const obj = await read('pod', 'web')
    const entries = assertEntries(obj, [
      {
        manager: 'kubectl',
        operation: 'Apply',
        apiVersion: 'v1',
        time: true,
        fieldsV1: { 'f:metadata': { 'f:labels': { 'f:app': {} } }, 'f:spec': container('name') },
      },
      {
        manager: 'kubectl-client-side-apply',
        operation: 'Update',
        apiVersion: 'v1',
        time: true,
        fieldsV1: { ...LAST_APPLIED, 'f:spec': { 'f:containers': { 'k:{"name":"app"}': { 'f:image': {} } } } },
      },
    ])
    // Losing fields to another writer is no change of kubectl's own: its time stays.
    assert.equal(timeOf(entries, 'kubectl', 'Apply'), timeOf(applied, 'kubectl', 'Apply'))
    assert.deepEqual(obj.metadata.labels, { app: 'web' })
    assertAdmittedOwnedByNoOne(obj)
  })
})

