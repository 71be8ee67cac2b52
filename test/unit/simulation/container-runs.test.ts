import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { KubeObject } from '../../../core/machinery/object.js'
import { restartBackOffMs, stepInitContainers, stepRestartingContainers } from '../../../core/simulation/container-runs.js'

type Obj = Record<string, unknown>

const T0 = Date.parse('2026-01-01T00:00:00Z')
const clock = (seconds: number) => ({ nowMs: T0 + seconds * 1000, at: new Date(T0 + seconds * 1000).toISOString().replace(/\.\d+Z$/, 'Z') })

function pod(restartPolicy: string, ...initContainers: Obj[]): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'ns', uid: 'u-1' },
    spec: { restartPolicy, initContainers, containers: [{ name: 'app', image: 'pause' }] },
    status: {},
  }
}

const init = (name: string, command?: string[], extra: Obj = {}): Obj => ({ name, image: 'busybox', ...(command ? { command } : {}), ...extra })

/** The pod with the statuses of `step` written, as the kubelet writes them. */
const written = (p: KubeObject, statuses: Obj[]): KubeObject => ({ ...p, status: { initContainerStatuses: statuses } })

const state = (s: Obj | undefined) => Object.keys((s?.['state'] ?? {}) as Obj)[0]

test('init containers that exit at once run in order and leave the pod initialized, each ready and Completed', () => {
  const p = pod('Never', init('one', ['/bin/true']), init('two', ['/bin/true']))
  const step = stepInitContainers(p, 0, clock(0))
  assert.equal(step.outcome, 'done')
  assert.deepEqual(step.started.map((c) => c['name']), ['one', 'two'])
  assert.deepEqual(step.incomplete, [])
  for (const s of step.statuses) {
    assert.equal(s['ready'], true)
    assert.deepEqual((s['state'] as { terminated: Obj }).terminated['exitCode'], 0)
    assert.equal((s['state'] as { terminated: Obj }).terminated['reason'], 'Completed')
  }
})

test('a sleeping init container holds the ones after it waiting, PodInitializing, until its time is up', () => {
  const p = pod('Always', init('wait', ['sleep', '5']), init('after'))
  const first = stepInitContainers(p, 0, clock(0))
  assert.equal(first.outcome, 'running')
  assert.equal(first.wakeInMs, 5000)
  assert.deepEqual(first.statuses.map(state), ['running', 'waiting'])
  assert.deepEqual((first.statuses[1]!['state'] as { waiting: Obj }).waiting, { reason: 'PodInitializing' })
  assert.deepEqual(first.incomplete, ['wait', 'after'])
  // Nothing to write until then.
  const again = stepInitContainers(written(p, first.statuses), 0, clock(2))
  assert.equal(again.changed, false)
  assert.equal(again.wakeInMs, 3000)
  const done = stepInitContainers(written(p, first.statuses), 0, clock(5))
  assert.equal(done.outcome, 'done')
  assert.deepEqual(done.started.map((c) => c['name']), ['after'])
})

test('under restartPolicy Never a failed init container fails the pod; the ones after it never start', () => {
  const p = pod('Never', init('ok', ['/bin/true']), init('bad', ['/bin/false']), init('never', ['/bin/true']))
  const step = stepInitContainers(p, 0, clock(0))
  assert.equal(step.outcome, 'failed')
  assert.deepEqual(step.incomplete, ['bad', 'never'])
  assert.deepEqual((step.statuses[1]!['state'] as { terminated: Obj }).terminated['exitCode'], 1)
  assert.equal((step.statuses[1]!['state'] as { terminated: Obj }).terminated['reason'], 'Error')
  assert.equal(state(step.statuses[2]), 'waiting')
})

test('otherwise it is restarted at once, then after the back-off, its restarts counted and its last exit kept', () => {
  const p = pod('Always', init('bad', ['/bin/false']), init('after', ['/bin/true']))
  const first = stepInitContainers(p, 0, clock(0))
  assert.equal(first.outcome, 'running')
  const bad = first.statuses[0]!
  // Failed, restarted at once, failed again: now it waits 10 s.
  assert.equal(bad['restartCount'], 1)
  assert.deepEqual((bad['state'] as { waiting: Obj }).waiting, { reason: 'CrashLoopBackOff', message: 'back-off 10s restarting failed container=bad pod=p_ns(u-1)' })
  assert.equal(((bad['lastState'] as { terminated: Obj }).terminated)['exitCode'], 1)
  assert.equal(first.wakeInMs, 10_000)
  assert.deepEqual(first.incomplete, ['bad', 'after'])
  assert.equal(stepInitContainers(written(p, first.statuses), 0, clock(9)).changed, false)
  const second = stepInitContainers(written(p, first.statuses), 0, clock(10))
  assert.equal(second.statuses[0]!['restartCount'], 2)
  assert.equal(second.wakeInMs, 20_000)
  assert.deepEqual(second.backedOff.map((c) => c['name']), ['bad'])
  // Go's way of writing the longer waits.
  const exitedAgain = { ...second.statuses[0]!, restartCount: 4, state: { terminated: { exitCode: 1, reason: 'Error', startedAt: clock(30).at, finishedAt: clock(30).at } } }
  const atFour = stepInitContainers(written(p, [exitedAgain, second.statuses[1]!]), 0, clock(30))
  assert.match(String(((atFour.statuses[0]!['state'] as { waiting: Obj }).waiting)['message']), /^back-off 1m20s restarting failed container=bad /)
  assert.deepEqual(second.started.map((c) => c['name']), ['bad'])
  assert.deepEqual([0, 1, 2, 3, 5, 6, 9].map(restartBackOffMs), [0, 10_000, 20_000, 40_000, 160_000, 300_000, 300_000])
})

test('a sidecar (restartPolicy Always) keeps running and ready, and the next init container starts after it', () => {
  const p = pod('Never', init('proxy', ['sleep', 'infinity'], { restartPolicy: 'Always' }), init('setup', ['/bin/true']))
  const step = stepInitContainers(p, 0, clock(0))
  assert.equal(step.outcome, 'done')
  assert.equal(state(step.statuses[0]), 'running')
  assert.equal(step.statuses[0]!['ready'], true)
  assert.equal(state(step.statuses[1]), 'terminated')
})

test('under restartPolicy Always an app container whose command ends is started again after the back-off; others keep running', () => {
  const p: KubeObject = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'ns', uid: 'u-1' },
    spec: { containers: [{ name: 'crash', image: 'busybox', command: ['sh', '-c', 'exit 1'] }, { name: 'web', image: 'nginx' }] },
    status: {
      containerStatuses: [
        { name: 'crash', image: 'busybox', ready: true, restartCount: 0, state: { running: { startedAt: clock(0).at } } },
        { name: 'web', image: 'nginx', ready: true, restartCount: 0, state: { running: { startedAt: clock(0).at } } },
      ],
    },
  }
  const step = stepRestartingContainers(p, clock(0))!
  assert.deepEqual(step.unready, ['crash'])
  assert.equal(step.statuses[0]!['restartCount'], 1)
  assert.equal(((step.statuses[0]!['state'] as { waiting: Obj }).waiting)['reason'], 'CrashLoopBackOff')
  assert.equal(step.wakeInMs, 10_000)
  assert.deepEqual(step.statuses[1], (p['status'] as { containerStatuses: Obj[] }).containerStatuses[1], 'the one that does not end is left as it runs')
  const later = stepRestartingContainers({ ...p, status: { containerStatuses: step.statuses } }, clock(10))!
  assert.equal(later.statuses[0]!['restartCount'], 2)
  assert.deepEqual(later.started.map((c) => c['name']), ['crash'])
  // Nothing ends: nothing to do.
  assert.equal(stepRestartingContainers({ ...p, spec: { containers: [{ name: 'web', image: 'nginx' }, { name: 'nap', image: 'busybox', command: ['sleep', 'infinity'] }] } }, clock(0)), undefined)
})
