/**
 * The priority and fairness dumps under /debug/api_priority_and_fairness/
 * through fetch: upstream's header lines and aligned rows per priority
 * level, queue and request, a request listed while it waits in a queue of
 * a level of one seat (held by a store that waits at a gate), 403 for
 * callers RBAC does not allow the paths, and no dumps without priority and
 * fairness (with or without profiling, as upstream installs them).
 */
import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import type { ApiServer } from '../../core/index.js'
import type { ApiServerOptions } from '../../core/options/api-server-options.js'
import type { TestClient } from './harness.js'
import { asAdmin, asUser, CM, routeJaneTo, startGated } from './priority-and-fairness-fixtures.js'

const DEBUG = '/debug/api_priority_and_fairness'

const LEVELS_HEADER = 'PriorityLevelName, ActiveQueues, IsIdle, IsQuiescing, WaitingRequests, ExecutingRequests, DispatchedRequests, RejectedRequests, TimedoutRequests, CancelledRequests'
const QUEUES_HEADER = 'PriorityLevelName, Index,  PendingRequests, ExecutingRequests, SeatsInUse, NextDispatchR, InitialSeatsSum, MaxSeatsSum, TotalWorkSum'
const REQUESTS_HEADER = 'PriorityLevelName, FlowSchemaName, QueueIndex, RequestIndexInQueue, FlowDistingsher, ArriveTime,'

const servers: ApiServer[] = []
after(async () => {
  await Promise.all(servers.map((s) => s.shutdown()))
})

/** A gated server, shut down after the suite. */
async function start(options: ApiServerOptions = {}) {
  const started = await startGated(options)
  servers.push(started.server)
  return started
}

/** A dump's lines, the header first; its status and content type checked. */
async function dump(api: TestClient, path: string): Promise<string[]> {
  const res = await api.get(`${DEBUG}/${path}`, asAdmin)
  assert.equal(res.status, 200, res.text)
  assert.equal(res.headers.get('content-type'), 'text/plain; charset=utf-8')
  assert.ok(res.text.endsWith('\n'))
  return res.text.slice(0, -1).split('\n')
}

/** A row's cells, without the alignment. */
const cells = (line: string): string[] => line.split(/,\s*/)

describe('priority and fairness debug dumps', () => {
  it('dump_priority_levels: upstream\'s header and an aligned row per level, by name', async () => {
    const { api } = await start()
    const lines = await dump(api, 'dump_priority_levels')
    assert.equal(lines[0], LEVELS_HEADER)
    assert.deepEqual(
      lines.slice(1).map((l) => cells(l)[0]),
      ['catch-all', 'exempt', 'global-default', 'leader-election', 'node-high', 'system', 'workload-high', 'workload-low'],
    )
    // Each cell padded to its column's widest plus one space, the last one not at all, as Go's tabwriter writes them.
    assert.equal(lines[1], 'catch-all,         0,            true,   false,       0,               0,                 0,                  0,                0,                0')
    // The dump itself runs at the exempt level, dispatched there.
    const exempt = cells(lines.find((l) => l.startsWith('exempt,')) as string)
    assert.deepEqual(exempt.slice(0, 6), ['exempt', '0', 'false', 'false', '0', '1'])
    assert.ok(Number(exempt[6]) >= 1)
    assert.deepEqual(cells(lines.find((l) => l.startsWith('global-default,')) as string).slice(1, 6), ['0', 'true', 'false', '0', '0'])
  })

  it('dump_queues: upstream\'s header and a row per queue of each queuing level', async () => {
    const { api } = await start()
    const lines = await dump(api, 'dump_queues')
    assert.equal(lines[0], QUEUES_HEADER)
    const globalDefault = lines.filter((l) => l.startsWith('global-default,'))
    assert.equal(globalDefault.length, 128, 'global-default has 128 queues')
    assert.equal(globalDefault[0], 'global-default,    0,      0,               0,                 0,          0.00000000ss,  0,               0,           0.00000000ss')
    assert.deepEqual(cells(globalDefault[127] as string).slice(0, 2), ['global-default', '127'])
    // Exempt levels have no queues.
    assert.equal(lines.filter((l) => l.startsWith('exempt,')).length, 0)
  })

  it('dump_requests: upstream\'s header, with the request details on asking, and the running dump itself', async () => {
    const { api } = await start()
    const plain = await dump(api, 'dump_requests')
    assert.equal(plain[0]?.replace(/\s+/g, ' '), `${REQUESTS_HEADER} InitialSeats, FinalSeats, AdditionalLatency, StartTime`)
    const detailed = await dump(api, 'dump_requests?includeRequestDetails=1')
    assert.equal(
      detailed[0]?.replace(/\s+/g, ' '),
      `${REQUESTS_HEADER} InitialSeats, FinalSeats, AdditionalLatency, StartTime, UserName, Verb, APIPath, Namespace, Name, APIVersion, Resource, SubResource`,
    )
    const own = detailed.map(cells).find((c) => c[0] === 'exempt' && c[12] === `${DEBUG}/dump_requests`)
    assert.ok(own, detailed.join('\n'))
    assert.deepEqual([...own.slice(0, 5), ...own.slice(6, 9), own[10], own[11]], ['exempt', 'exempt', '-1', '-1', '', '1', '0', '0s', 'root', 'get'])
    assert.match(own[5] as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d*[1-9])?Z$/)
    assert.match(own[9] as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d*[1-9])?Z$/)
  })

  it('lists a request while it waits in a queue, and counts it in its level and queue', async () => {
    const { api, storage } = await start({ serving: { maxInFlight: { readOnly: 1, mutating: 1 } } })
    await routeJaneTo(api, { type: 'Limited', limited: { nominalConcurrencyShares: 1, limitResponse: { type: 'Queue', queuing: { queues: 2, handSize: 1, queueLengthLimit: 5 } } } })
    // The level's one seat is held at the gate; the next request of hers waits in a queue.
    const held = api.get(`${CM}/slow`, asUser)
    await storage.whenHeld(1)
    const queued = api.get(`${CM}/slow?waiting=1`, asUser)
    const waitingRow = (rows: string[][]) => rows.find((c) => c[0] === 'jane-level' && c[3] === '0')
    let rows: string[][] = []
    for (let attempt = 0; !waitingRow(rows) && attempt < 200; attempt += 1) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 10))
      rows = (await dump(api, 'dump_requests?includeRequestDetails=1')).map(cells)
    }
    const waiting = waitingRow(rows)
    assert.ok(waiting, rows.map((r) => r.join(',')).join('\n'))
    const queue = waiting[2] as string
    assert.match(queue, /^[01]$/)
    assert.deepEqual([waiting[1], waiting[4], ...waiting.slice(6, 9), waiting[9]], ['jane', 'jane', '1', '0', '0s', '0001-01-01T00:00:00Z'])
    assert.deepEqual(waiting.slice(10), ['jane', 'get', `${CM}/slow`, 'default', 'slow', 'v1', 'configmaps', ''])
    // The held one runs, in no queue: it found the seat free.
    const running = rows.find((c) => c[0] === 'jane-level' && c[3] === '-1')
    assert.deepEqual(running?.slice(1, 5), ['jane', '-1', '-1', 'jane'])

    const levelRow = cells((await dump(api, 'dump_priority_levels')).find((l) => l.startsWith('jane-level,')) as string)
    assert.deepEqual(levelRow.slice(1, 6), ['1', 'false', 'false', '1', '1'])
    const queueRow = cells((await dump(api, 'dump_queues')).find((l) => l.startsWith(`jane-level,${' '.repeat(8)}${queue},`)) as string)
    assert.deepEqual(queueRow.slice(2), ['1', '0', '0', '0.00000000ss', '1', '1', '0.00300000ss'])

    storage.open()
    assert.equal((await held).status, 200)
    await storage.whenHeld(1)
    storage.open()
    assert.equal((await queued).status, 200)
    const after = cells((await dump(api, 'dump_priority_levels')).find((l) => l.startsWith('jane-level,')) as string)
    assert.deepEqual(after.slice(1, 10), ['0', 'true', 'false', '0', '0', after[6], '0', '0', '0'])
    assert.ok(Number(after[6]) >= 2)
  })

  it('answers 403 to callers RBAC does not allow the paths, anonymous ones included', async () => {
    const { server, api } = await start({ authorizationModes: ['RBAC'] })
    for (const path of ['dump_priority_levels', 'dump_queues', 'dump_requests']) {
      const user = await api.get(`${DEBUG}/${path}`, asUser)
      assert.equal(user.status, 403, path)
      assert.equal(user.body.message, `forbidden: User "jane" cannot get path "${DEBUG}/${path}"`)
      const anonymous = await server.fetch(new Request(`http://in-process${DEBUG}/${path}`), {})
      assert.equal(anonymous.status, 403, path)
      assert.equal(((await anonymous.json()) as { message: string }).message, `forbidden: User "system:anonymous" cannot get path "${DEBUG}/${path}"`)
      assert.equal((await api.get(`${DEBUG}/${path}`, asAdmin)).status, 200, path)
    }
  })

  it('serves them with profiling off, as upstream, and not without priority and fairness', async () => {
    const { api: unprofiled } = await start({ serving: { profiling: false } })
    assert.equal((await dump(unprofiled, 'dump_priority_levels'))[0], LEVELS_HEADER)
    const { api: withoutApf } = await start({ serving: { priorityAndFairness: false } })
    for (const path of ['dump_priority_levels', 'dump_queues', 'dump_requests']) assert.equal((await withoutApf.get(`${DEBUG}/${path}`, asAdmin)).status, 404, path)
  })
})
