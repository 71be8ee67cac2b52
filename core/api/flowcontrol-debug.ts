/**
 * `/debug/api_priority_and_fairness/` (served while priority and fairness
 * is on, whatever `--profiling` says, as upstream installs them): three
 * dumps of the flow control state in upstream's text, one row per priority
 * level (`dump_priority_levels`), per queue (`dump_queues`) and per request
 * waiting or running (`dump_requests`, with `?includeRequestDetails=1` the
 * request's user and what it asks). Cells end in a comma and are aligned
 * as Go's tabwriter aligns them (at least 8 wide, one space of padding),
 * under a header line. Levels come by name. Behind the chain these are
 * non-resource paths (`get` on the path), so only users allowed them
 * (system:masters by default) read them.
 *
 * Where the project keeps no such data, the cell is what upstream writes
 * for an empty value: every request takes one seat for no extra time (1,
 * 0, `0s`), queues keep no virtual time (`NextDispatchR` is
 * `0.00000000ss`), and a request that found a seat free at once waited in
 * no queue (QueueIndex -1).
 */
import type { Env, Hono } from 'hono'
import type { FlowControl, PriorityLevel } from '../flowcontrol/flow-control.js'
import type { RequestEntry } from '../flowcontrol/queue-set.js'
import { sizedResponse } from '../http/respond.js'

const PREFIX = '/debug/api_priority_and_fairness'

/** The tabwriter settings of upstream's dumps. */
const MIN_WIDTH = 8
const PADDING = 1

/** A line of cells, every one but the last ended by a tab. */
type Line = string[]

const runes = (text: string): number => {
  let n = 0
  for (const _ of text) n += 1
  return n
}

/**
 * Go's text/tabwriter over complete lines: a column block is a run of
 * consecutive lines that have a tab-ended cell in that column; each of its
 * cells is padded with spaces to the block's widest cell plus the padding
 * (never under the minimum width). The last cell of a line is not padded.
 */
export function alignCells(text: string): string {
  const lines: Line[] = text.split('\n').map((l) => l.split('\t'))
  // The text ends with a newline: the empty piece after it is no line.
  const last = lines[lines.length - 1]
  if (last?.length === 1 && last[0] === '') lines.pop()
  const out: string[] = []
  const write = (widths: readonly number[], from: number, to: number): void => {
    for (let i = from; i < to; i += 1) {
      const cells = lines[i] as Line
      out.push(cells.map((cell, j) => (j < widths.length ? cell + ' '.repeat(Math.max(0, (widths[j] as number) - runes(cell))) : cell)).join(''), '\n')
    }
  }
  const format = (widths: readonly number[], from: number, to: number): void => {
    const column = widths.length
    let written = from
    for (let i = from; i < to; i += 1) {
      if (column >= (lines[i] as Line).length - 1) continue
      write(widths, written, i)
      let width = MIN_WIDTH
      let end = i
      for (; end < to && column < (lines[end] as Line).length - 1; end += 1) width = Math.max(width, runes((lines[end] as Line)[column] as string) + PADDING)
      format([...widths, width], i, end)
      written = end
      i = end
    }
    write(widths, written, to)
  }
  // (A line of one cell, where the writer flushes, ends every block anyway.)
  format([], 0, lines.length)
  return out.join('')
}

const row = (...cells: readonly (string | number | boolean)[]): string => cells.map(String).join(',\t')

/** Go's time.RFC3339Nano in UTC: fractional seconds without trailing zeros. */
function rfc3339Nano(ms: number | undefined): string {
  if (ms === undefined) return '0001-01-01T00:00:00Z'
  return new Date(ms).toISOString().replace(/\.(\d*?)0*Z$/, (_, digits: string) => (digits ? `.${digits}Z` : 'Z'))
}

/** Upstream's SeatSeconds, fixed point in units of 1e-8 seat-seconds, as its String writes it. */
function seatSeconds(units: number): string {
  const scale = 100_000_000
  return `${Math.floor(units / scale)}.${String(units % scale).padStart(8, '0')}ss`
}
/** Upstream's work of a one-seat request: its estimated service time of 3 ms. */
const ONE_SEAT_WORK = 300_000

const EMPTY_DISPATCH_R = seatSeconds(0)

function dumpPriorityLevels(levels: readonly PriorityLevel[]): string {
  const lines = [row('PriorityLevelName', 'ActiveQueues', 'IsIdle', 'IsQuiescing', 'WaitingRequests', 'ExecutingRequests', 'DispatchedRequests', 'RejectedRequests', 'TimedoutRequests', 'CancelledRequests')]
  for (const level of levels) {
    const queues = level.queueSet?.dump() ?? []
    const waiting = level.queueSet?.waiting ?? 0
    const executing = level.queueSet ? level.queueSet.executing : level.activity.executing.size
    const { dispatched, rejected, cancelled } = level.activity
    // A level is removed at once when its object goes: none is ever quiescing.
    lines.push(row(level.limits.name, queues.filter((q) => q.waiting.length > 0).length, waiting === 0 && executing === 0, false, waiting, executing, dispatched, rejected, 0, cancelled))
  }
  return lines.map((l) => `${l}\n`).join('')
}

function dumpQueues(levels: readonly PriorityLevel[]): string {
  const lines = [row('PriorityLevelName', 'Index', 'PendingRequests', 'ExecutingRequests', 'SeatsInUse', 'NextDispatchR', 'InitialSeatsSum', 'MaxSeatsSum', 'TotalWorkSum')]
  for (const level of levels) {
    ;(level.queueSet?.dump() ?? []).forEach((q, i) => {
      const pending = q.waiting.length
      lines.push(row(level.limits.name, i, pending, q.executing, q.executing, EMPTY_DISPATCH_R, pending, pending, seatSeconds(pending * ONE_SEAT_WORK)))
    })
  }
  return lines.map((l) => `${l}\n`).join('')
}

/** Go's schema.GroupVersion.String(): the version alone for the core group. */
const groupVersion = (group: string, version: string): string => (group ? `${group}/${version}` : version)

function dumpRequests(levels: readonly PriorityLevel[], details: boolean): string {
  const header = row('PriorityLevelName', 'FlowSchemaName', 'QueueIndex', 'RequestIndexInQueue', 'FlowDistingsher', 'ArriveTime', 'InitialSeats', 'FinalSeats', 'AdditionalLatency', 'StartTime')
  const detailHeader = row('UserName', 'Verb', 'APIPath', 'Namespace', 'Name', 'APIVersion', 'Resource', 'SubResource')
  const lines = [details ? `${header},\t${detailHeader}` : header]
  for (const level of levels) {
    const line = (entry: RequestEntry, queue: number, index: number): void => {
      const cells = row(level.limits.name, entry.flowSchema, queue, index, entry.distinguisher, rfc3339Nano(entry.arrived), 1, 0, '0s', rfc3339Nano(entry.started))
      if (!details) return void lines.push(cells)
      const { info } = entry
      lines.push(`${cells},\t${row(entry.user, info.verb, info.path, info.namespace, info.name, groupVersion(info.apiGroup, info.apiVersion), info.resource, info.subresource)}`)
    }
    // Running requests by the queue they waited in; those of no queue (or of queues since replaced) come last.
    const running = new Map<number, RequestEntry[]>()
    for (const entry of level.activity.executing) {
      const list = running.get(entry.queue)
      if (list) list.push(entry)
      else running.set(entry.queue, [entry])
    }
    ;(level.queueSet?.dump() ?? []).forEach((q, iq) => {
      q.waiting.forEach((entry, ir) => line(entry, iq, ir))
      for (const entry of running.get(iq) ?? []) line(entry, iq, -1)
      running.delete(iq)
    })
    for (const entries of running.values()) for (const entry of entries) line(entry, entry.queue, -1)
  }
  return lines.map((l) => `${l}\n`).join('')
}

/** Upstream writes no content type: Go's sniffing names the text. */
const text = (body: string): Response => sizedResponse(alignCells(body), { headers: { 'content-type': 'text/plain; charset=utf-8' } })

/** The three dumps, for any method, at their exact paths. */
export function installFlowControlDebugRoutes<E extends Env>(app: Hono<E>, flowControl: FlowControl): void {
  app.all(`${PREFIX}/dump_priority_levels`, () => text(dumpPriorityLevels(flowControl.priorityLevels())))
  app.all(`${PREFIX}/dump_queues`, () => text(dumpQueues(flowControl.priorityLevels())))
  // Details for any non-empty first value of the parameter, as upstream reads it.
  app.all(`${PREFIX}/dump_requests`, (c) => text(dumpRequests(flowControl.priorityLevels(), (c.req.query('includeRequestDetails') ?? '') !== '')))
}
