/**
 * Concurrency limits of the priority levels (upstream's apf controller,
 * flowcontrol v1): the server's limit (`--max-requests-inflight` plus
 * `--max-mutating-requests-inflight`) shared by nominal concurrency shares,
 * each Limited level lending `lendablePercent` of its seats and borrowing up
 * to `borrowingLimitPercent` more. Every adjustment period the seats are
 * dealt again from each level's smoothed demand.
 */
import { isPlainObject, type KubeObject } from '../machinery/object.js'

type Obj = Record<string, unknown>
const obj = (v: unknown): Obj => (isPlainObject(v) ? v : {})
const num = (v: unknown, fallback: number): number => (typeof v === 'number' ? v : fallback)

export interface QueuingConfig {
  queues: number
  handSize: number
  queueLengthLimit: number
}

export interface LevelLimits {
  name: string
  uid: string
  exempt: boolean
  nominalCL: number
  /** The fewest seats it keeps while lending (nominal minus lendable). */
  minCL: number
  /** The most seats it may hold while borrowing. */
  maxCL: number
  /** Queues of a Limited level whose limit response is Queue; undefined: Reject at once. */
  queuing?: QueuingConfig
}

// Upstream's defaults for fields left unset (flowcontrol v1 defaulting).
const DEFAULT_SHARES = 30
const DEFAULT_QUEUING: QueuingConfig = { queues: 64, handSize: 8, queueLengthLimit: 50 }

function queuingOf(limited: Obj): QueuingConfig | undefined {
  const response = obj(limited['limitResponse'])
  if (response['type'] === 'Reject') return undefined
  const q = obj(response['queuing'])
  return {
    queues: num(q['queues'], DEFAULT_QUEUING.queues),
    handSize: num(q['handSize'], DEFAULT_QUEUING.handSize),
    queueLengthLimit: num(q['queueLengthLimit'], DEFAULT_QUEUING.queueLengthLimit),
  }
}

/** Each level's limits for a server limit of `serverCL` seats. */
export function levelLimits(levels: readonly KubeObject[], serverCL: number): LevelLimits[] {
  const settings = levels.map((pl) => {
    const spec = obj(pl['spec'])
    const exempt = spec['type'] === 'Exempt'
    const body = obj(exempt ? spec['exempt'] : spec['limited'])
    return {
      pl,
      exempt,
      body,
      shares: num(body['nominalConcurrencyShares'], exempt ? 0 : DEFAULT_SHARES),
      lendable: num(body['lendablePercent'], 0),
      borrowing: typeof body['borrowingLimitPercent'] === 'number' ? body['borrowingLimitPercent'] : undefined,
    }
  })
  const shareSum = settings.reduce((sum, s) => sum + s.shares, 0)
  return settings.map((s) => {
    const nominalCL = shareSum === 0 ? 0 : Math.ceil((serverCL * s.shares) / shareSum)
    const lendableCL = Math.round((nominalCL * s.lendable) / 100)
    const borrowingCL = s.borrowing === undefined ? serverCL : Math.round((nominalCL * s.borrowing) / 100)
    const queuing = s.exempt ? undefined : queuingOf(s.body)
    return {
      name: s.pl.metadata.name ?? '',
      uid: s.pl.metadata.uid ?? '',
      exempt: s.exempt,
      nominalCL,
      minCL: nominalCL - lendableCL,
      maxCL: nominalCL + borrowingCL,
      ...(queuing ? { queuing } : {}),
    }
  })
}

export interface AllocationItem {
  lower: number
  upper: number
  target: number
}

/**
 * Seats for each level summing to `total` (upstream's
 * computeConcurrencyAllocation): each gets its target scaled by one common
 * fraction, clamped to its bounds; the fraction is found by bisection.
 */
export function allocateSeats(total: number, items: readonly AllocationItem[]): number[] {
  const at = (fraction: number): number[] => items.map((i) => Math.min(i.upper, Math.max(i.lower, fraction * i.target)))
  const sum = (values: number[]): number => values.reduce((a, b) => a + b, 0)
  if (items.length === 0) return []
  if (sum(items.map((i) => i.lower)) >= total) return items.map((i) => i.lower)
  if (sum(items.map((i) => i.upper)) <= total) return items.map((i) => i.upper)
  let low = 0
  let high = 1
  while (sum(at(high)) < total && high < 1e9) high *= 2
  for (let step = 0; step < 60; step += 1) {
    const mid = (low + high) / 2
    if (sum(at(mid)) < total) low = mid
    else high = mid
  }
  return at(high)
}

/**
 * A level's seat demand over one adjustment period, integrated over time
 * (upstream's seatDemandIntegrator): its mean plus one standard deviation is
 * the period's envelope.
 */
export class DemandIntegrator {
  private value = 0
  private since: number
  private start: number
  private sum = 0
  private sumSquares = 0

  constructor(private readonly clock: () => number) {
    this.since = this.start = clock()
  }

  set(value: number): void {
    this.accumulate()
    this.value = value
  }

  /** The envelope of the period now ending, and a new period begun. */
  reset(): number {
    this.accumulate()
    const span = this.since - this.start
    const mean = span > 0 ? this.sum / span : this.value
    const variance = span > 0 ? Math.max(0, this.sumSquares / span - mean * mean) : 0
    this.start = this.since
    this.sum = this.sumSquares = 0
    return mean + Math.sqrt(variance)
  }

  private accumulate(): void {
    const now = this.clock()
    const dt = now - this.since
    this.sum += this.value * dt
    this.sumSquares += this.value * this.value * dt
    this.since = now
  }
}

/** Upstream's smoothing: demand falls by this factor per period unless the new envelope is higher. */
export const DEMAND_SMOOTHING = 0.977
