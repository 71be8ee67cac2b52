/**
 * kubectl against the daemon's default admission chain: `kubectl describe
 * quota` shows usage counted in-process, after creates and deletes; a
 * create past the quota is refused with upstream's message; LimitRange
 * defaults land on a pod; a namespace labelled for the restricted Pod
 * Security level warns about its pods and refuses a new one that violates it.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { Daemon, eventually } from './daemon.js'

let d: Daemon

before(async () => {
  d = await Daemon.start()
})

after(async () => {
  assert.equal(await d.stop(), 0, 'the daemon exits 0 on SIGTERM')
})

const ok = (...args: string[]): Promise<string> => d.ok(...args)

const podManifest = (name: string, cpu: string) => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  namespace: team
spec:
  containers:
  - name: app
    image: nginx
    resources:
      requests:
        cpu: ${cpu}
`

/** The Used and Hard columns of `kubectl describe quota`, by resource. */
async function describedUsage(name: string): Promise<Record<string, [string, string]>> {
  const out = await ok('describe', 'quota', name, '-n', 'team')
  const rows = out.split('\n').slice(out.split('\n').findIndex((l) => l.startsWith('--------')) + 1)
  return Object.fromEntries(
    rows
      .map((l) => l.trim().split(/\s+/))
      .filter((cols) => cols.length === 3)
      .map(([resource = '', used = '', hard = '']) => [resource, [used, hard]]),
  )
}

describe('kubectl and the quota, limit and pod security plugins', () => {
  it('shows quota usage in describe after creates and deletes, and refuses past the quota', async () => {
    await ok('create', 'namespace', 'team')
    assert.equal(await ok('create', 'quota', 'compute', '-n', 'team', '--hard=pods=2,requests.cpu=1,count/configmaps=1'), 'resourcequota/compute created\n')
    await eventually(async () => assert.deepEqual(await describedUsage('compute'), { 'count/configmaps': ['0', '1'], pods: ['0', '2'], 'requests.cpu': ['0', '1'] }))

    assert.match(await ok('apply', '-f', d.manifest('first.yaml', podManifest('first', '600m'))), /pod\/first created/)
    assert.deepEqual(await describedUsage('compute'), { 'count/configmaps': ['0', '1'], pods: ['1', '2'], 'requests.cpu': ['600m', '1'] })

    const refused = await d.kubectl('apply', '-f', d.manifest('second.yaml', podManifest('second', '600m')))
    assert.notEqual(refused.code, 0)
    assert.match(
      refused.stderr,
      /pods "second" is forbidden: exceeded quota: compute, requested: requests\.cpu=600m, used: requests\.cpu=600m, limited: requests\.cpu=1/,
    )
    assert.notEqual((await d.kubectl('get', 'pod', 'second', '-n', 'team')).code, 0)

    await ok('create', 'configmap', 'one', '-n', 'team')
    const cm = await d.kubectl('create', 'configmap', 'two', '-n', 'team')
    assert.match(cm.stderr, /configmaps "two" is forbidden: exceeded quota: compute, requested: count\/configmaps=1, used: count\/configmaps=1, limited: count\/configmaps=1/)

    await ok('delete', 'pod', 'first', '-n', 'team', '--grace-period=0', '--force')
    await ok('delete', 'configmap', 'one', '-n', 'team')
    await eventually(async () => assert.deepEqual(await describedUsage('compute'), { 'count/configmaps': ['0', '1'], pods: ['0', '2'], 'requests.cpu': ['0', '1'] }))
    assert.match(await ok('get', 'quota', 'compute', '-n', 'team'), /requests\.cpu: 0\/1/)
  })

  it('gives a pod the LimitRange defaults', async () => {
    await ok('create', 'namespace', 'limited')
    const range = `apiVersion: v1
kind: LimitRange
metadata:
  name: defaults
  namespace: limited
spec:
  limits:
  - type: Container
    default:
      memory: 256Mi
`
    await ok('apply', '-f', d.manifest('range.yaml', range))
    await eventually(async () => {
      await d.kubectl('delete', 'pod', 'p', '-n', 'limited', '--ignore-not-found')
      await ok('run', 'p', '-n', 'limited', '--image=nginx', '--restart=Never')
      assert.equal(await ok('get', 'pod', 'p', '-n', 'limited', '-o', 'jsonpath={.spec.containers[0].resources.limits.memory}'), '256Mi')
    })
  })

  it('warns about existing pods when a namespace is labelled restricted, then refuses a pod that violates it', async () => {
    await ok('create', 'namespace', 'secure')
    await ok('run', 'old', '-n', 'secure', '--image=nginx', '--restart=Never')
    const labelled = await d.kubectl('label', 'namespace', 'secure', 'pod-security.kubernetes.io/enforce=restricted')
    assert.equal(labelled.code, 0, labelled.stderr)
    assert.match(labelled.stderr, /Warning: existing pods in namespace "secure" violate the new PodSecurity enforce level "restricted:latest"/)
    assert.match(labelled.stderr, /Warning: old: allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile/)
    await eventually(async () => {
      const refused = await d.kubectl('run', 'new', '-n', 'secure', '--image=nginx', '--restart=Never')
      assert.notEqual(refused.code, 0)
      assert.match(
        refused.stderr,
        /pods "new" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false \(container "new" must set securityContext\.allowPrivilegeEscalation=false\)/,
      )
    })
    assert.notEqual((await d.kubectl('get', 'pod', 'new', '-n', 'secure')).code, 0)
  })
})
