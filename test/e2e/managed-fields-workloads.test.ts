/**
 * managedFields as upstream records them for a deployment and a custom
 * resource with schema defaults, driven by kubectl: client-side apply, the
 * move to server-side apply, changes, the move back, the scale subresource,
 * and defaults that come back when an applier drops a field.
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { Daemon } from './daemon.js'
import { assertEntries, type Expected, LAST_APPLIED, manifest, type Obj, paths, read, step, timeOf, useDaemon } from './managed-fields.js'

let d: Daemon

before(async () => {
  d = await Daemon.start()
  useDaemon(d)
})

after(async () => {
  assert.equal(await d.stop(), 0, 'the daemon exits 0 on SIGTERM')
})

describe('a deployment moved from client-side to server-side apply and back', () => {
  const deployment = (image: string, labels: string, extra = '') => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {${labels}}
spec:
  replicas: 2
${extra}  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: ${image}
`
  const applied = (labels: Record<string, unknown>, ...containerFields: string[]) => ({
    'f:metadata': { 'f:labels': labels },
    'f:spec': {
      'f:replicas': {},
      'f:selector': {},
      'f:template': {
        'f:metadata': { 'f:labels': { 'f:app': {} } },
        'f:spec': { 'f:containers': { 'k:{"name":"app"}': Object.fromEntries(['.', ...containerFields.map((f) => `f:${f}`)].map((f) => [f, {}])) } },
      },
    },
  })

  it('creates it with kubectl apply, the defaulted fields owned by the applier', async () => {
    await step('deployment.apps/web created\n', 'apply', '-f', manifest('web-1.yaml', deployment('nginx:1.27', 'app: web')))
    assertEntries(await read('deployment', 'web'), [
      {
        manager: 'kubectl-client-side-apply',
        operation: 'Update',
        apiVersion: 'apps/v1',
        time: true,
        fieldsV1: {
          'f:metadata': {
            'f:annotations': { '.': {}, 'f:kubectl.kubernetes.io/last-applied-configuration': {} },
            'f:labels': { '.': {}, 'f:app': {} },
          },
          'f:spec': {
            'f:progressDeadlineSeconds': {},
            'f:replicas': {},
            'f:revisionHistoryLimit': {},
            'f:selector': {},
            'f:strategy': { 'f:rollingUpdate': { '.': {}, 'f:maxSurge': {}, 'f:maxUnavailable': {} }, 'f:type': {} },
            'f:template': {
              'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
              'f:spec': {
                'f:containers': {
                  'k:{"name":"app"}': {
                    '.': {},
                    'f:image': {},
                    'f:imagePullPolicy': {},
                    'f:name': {},
                    'f:resources': {},
                    'f:terminationMessagePath': {},
                    'f:terminationMessagePolicy': {},
                  },
                },
                'f:dnsPolicy': {},
                'f:restartPolicy': {},
                'f:schedulerName': {},
                'f:securityContext': {},
                'f:terminationGracePeriodSeconds': {},
              },
            },
          },
        },
      },
    ])
  })

  it('moves to --server-side with the same file: the defaults it stops owning keep their values', async () => {
    await step('deployment.apps/web serverside-applied\n', 'apply', '--server-side', '-f', join(d.dir, 'web-1.yaml'))
    const obj = await read('deployment', 'web')
    assertEntries(obj, [
      { manager: 'kubectl-last-applied', operation: 'Apply', apiVersion: 'apps/v1', time: false, fieldsV1: LAST_APPLIED },
      { manager: 'kubectl', operation: 'Apply', apiVersion: 'apps/v1', time: true, fieldsV1: applied({ 'f:app': {} }, 'image', 'name') },
    ])
    const spec = obj['spec'] as Record<string, unknown>
    assert.equal(spec['revisionHistoryLimit'], 10)
    assert.equal(spec['progressDeadlineSeconds'], 600)
    assert.equal(obj.metadata['generation' as keyof Obj['metadata']], 1, 'the re-apply changed nothing the controller acts on')
  })

  it('changes image and labels server-side, then moves back to client-side apply', async () => {
    await step('deployment.apps/web serverside-applied\n', 'apply', '--server-side', '-f', manifest('web-2.yaml', deployment('nginx:1.28', 'app: web, tier: front')))
    const changed = assertEntries(await read('deployment', 'web'), [
      { manager: 'kubectl-last-applied', operation: 'Apply', apiVersion: 'apps/v1', time: false, fieldsV1: LAST_APPLIED },
      { manager: 'kubectl', operation: 'Apply', apiVersion: 'apps/v1', time: true, fieldsV1: applied({ 'f:app': {}, 'f:tier': {} }, 'image', 'name') },
    ])
    await step('deployment.apps/web configured\n', 'apply', '-f', manifest('web-3.yaml', deployment('nginx:1.29', 'app: web')))
    const obj = await read('deployment', 'web')
    assertEntries(obj, [
      { manager: 'kubectl', operation: 'Apply', apiVersion: 'apps/v1', time: true, fieldsV1: applied({ 'f:app': {} }, 'name') },
      {
        manager: 'kubectl-client-side-apply',
        operation: 'Update',
        apiVersion: 'apps/v1',
        time: true,
        fieldsV1: { ...LAST_APPLIED, 'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"app"}': { 'f:image': {} } } } } } },
      },
    ])
    assert.deepEqual(obj.metadata.labels, { app: 'web' })
    // Losing fields to another writer is no change of kubectl's own: its time stays as the last apply set it.
    assert.equal(timeOf(obj.metadata.managedFields ?? [], 'kubectl', 'Apply'), timeOf(changed, 'kubectl', 'Apply'))
  })

  it('records kubectl scale under the scale subresource, which then conflicts with an apply of other replicas', async () => {
    await step('deployment.apps/web scaled\n', 'scale', 'deployment', 'web', '--replicas=4')
    const entries = (await read('deployment', 'web')).metadata.managedFields ?? []
    const scaled = entries.find((e) => e.subresource === 'scale')
    // Upstream's scale handler gives a new scale manager the parent's time for it: none.
    assert.deepEqual(scaled, { manager: 'kubectl', operation: 'Update', apiVersion: 'apps/v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:replicas': {} } }, subresource: 'scale' })
    const applier = entries.find((e) => e.manager === 'kubectl' && e.operation === 'Apply')
    assert.ok(applier && !paths(applier.fieldsV1).includes('f:spec.f:replicas'), 'the applier lost the replicas to the scale')
    const r = await d.kubectl('apply', '--server-side', '-f', join(d.dir, 'web-3.yaml'))
    assert.notEqual(r.code, 0)
    assert.match(r.stderr, /Apply failed with 1 conflict: conflict with "kubectl" with subresource "scale" using apps\/v1: \.spec\.replicas/)
    assert.equal(((await read('deployment', 'web'))['spec'] as Record<string, unknown>)['replicas'], 4, 'the refused apply changed nothing')
  })

  it('gives a defaulted field its default back when the applier drops it', async () => {
    const tuned = deployment('nginx:1.27', 'app: tuned', '  revisionHistoryLimit: 3\n  progressDeadlineSeconds: 100\n').replaceAll('name: web\n', 'name: tuned\n')
    await step('deployment.apps/tuned serverside-applied\n', 'apply', '--server-side', '-f', manifest('tuned-1.yaml', tuned))
    const plain = deployment('nginx:1.27', 'app: tuned').replaceAll('name: web\n', 'name: tuned\n')
    await step('deployment.apps/tuned serverside-applied\n', 'apply', '--server-side', '-f', manifest('tuned-2.yaml', plain))
    const obj = await read('deployment', 'tuned')
    const spec = obj['spec'] as Record<string, unknown>
    assert.equal(spec['revisionHistoryLimit'], 10)
    assert.equal(spec['progressDeadlineSeconds'], 600)
    const kubectl = assertEntries(obj, [{ manager: 'kubectl', operation: 'Apply', apiVersion: 'apps/v1', time: true, fieldsV1: applied({ 'f:app': {} }, 'image', 'name') }])
    assert.equal(kubectl.length, 1)
  })
})

describe('a custom resource with schema defaults moved from client-side to server-side apply and back', () => {
  const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.size, statusReplicasPath: .status.size}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, default: 1}
              color: {type: string}
              mode: {type: string, default: fast}
          status:
            type: object
            properties:
              size: {type: integer}
`
  const widget = (spec: string) => `apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n${spec}`
  const specOf = async (): Promise<Record<string, unknown>> => (await read('widget', 'w'))['spec'] as Record<string, unknown>
  const kubectlOwns = (spec: Record<string, unknown>): Expected => ({ manager: 'kubectl', operation: 'Apply', apiVersion: 'example.com/v1', time: true, fieldsV1: { 'f:spec': spec } })
  const lastApplied: Expected = { manager: 'kubectl-last-applied', operation: 'Apply', apiVersion: 'example.com/v1', time: false, fieldsV1: LAST_APPLIED }

  before(async () => {
    await step('customresourcedefinition.apiextensions.k8s.io/widgets.example.com created\n', 'apply', '-f', manifest('crd.yaml', crd))
    const r = await d.kubectl('wait', '--for=condition=Established', 'crd/widgets.example.com', '--timeout=20s')
    assert.equal(r.code, 0, r.stderr)
  })

  it('creates it with kubectl apply: its schema defaults are the applier\'s', async () => {
    await step('widget.example.com/w created\n', 'apply', '-f', manifest('w-1.yaml', widget('  color: red\n')))
    assert.deepEqual(await specOf(), { color: 'red', mode: 'fast', size: 1 })
    assertEntries(await read('widget', 'w'), [
      {
        manager: 'kubectl-client-side-apply',
        operation: 'Update',
        apiVersion: 'example.com/v1',
        time: true,
        fieldsV1: {
          'f:metadata': { 'f:annotations': { '.': {}, 'f:kubectl.kubernetes.io/last-applied-configuration': {} } },
          'f:spec': { '.': {}, 'f:color': {}, 'f:mode': {}, 'f:size': {} },
        },
      },
    ])
  })

  it('moves to --server-side, sets a size, then drops it and gets the default back', async () => {
    await step('widget.example.com/w serverside-applied\n', 'apply', '--server-side', '-f', join(d.dir, 'w-1.yaml'))
    assertEntries(await read('widget', 'w'), [lastApplied, kubectlOwns({ 'f:color': {} })])
    assert.deepEqual(await specOf(), { color: 'red', mode: 'fast', size: 1 })

    await step('widget.example.com/w serverside-applied\n', 'apply', '--server-side', '-f', manifest('w-2.yaml', widget('  color: blue\n  size: 3\n')))
    assertEntries(await read('widget', 'w'), [lastApplied, kubectlOwns({ 'f:color': {}, 'f:size': {} })])
    assert.deepEqual(await specOf(), { color: 'blue', mode: 'fast', size: 3 })

    await step('widget.example.com/w serverside-applied\n', 'apply', '--server-side', '-f', manifest('w-3.yaml', widget('  color: green\n')))
    assertEntries(await read('widget', 'w'), [lastApplied, kubectlOwns({ 'f:color': {} })])
    assert.deepEqual(await specOf(), { color: 'green', mode: 'fast', size: 1 })
  })

  it('moves back to client-side apply, which takes over what it changes', async () => {
    await step('widget.example.com/w configured\n', 'apply', '-f', join(d.dir, 'w-2.yaml'))
    assert.deepEqual(await specOf(), { color: 'blue', mode: 'fast', size: 3 })
    // kubectl's color and kubectl-last-applied's annotation went to the client-side applier; nothing is left to them.
    assertEntries(await read('widget', 'w'), [
      {
        manager: 'kubectl-client-side-apply',
        operation: 'Update',
        apiVersion: 'example.com/v1',
        time: true,
        fieldsV1: { ...LAST_APPLIED, 'f:spec': { 'f:color': {}, 'f:size': {} } },
      },
    ])
  })

  it('records a write through the scale subresource on the size path', async () => {
    await step('widget.example.com/w scaled\n', 'scale', 'widget', 'w', '--replicas=5')
    assert.deepEqual(await specOf(), { color: 'blue', mode: 'fast', size: 5 })
    const entries = (await read('widget', 'w')).metadata.managedFields ?? []
    assert.deepEqual(
      entries.map(({ time: _t, ...e }) => e),
      [
        // No time sorts first: upstream's scale handler gives a new scale manager none.
        { manager: 'kubectl', operation: 'Update', apiVersion: 'example.com/v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:size': {} } }, subresource: 'scale' },
        { manager: 'kubectl-client-side-apply', operation: 'Update', apiVersion: 'example.com/v1', fieldsType: 'FieldsV1', fieldsV1: { ...LAST_APPLIED, 'f:spec': { 'f:color': {} } } },
      ],
    )
  })
})
