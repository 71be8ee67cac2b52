/**
 * API Priority and Fairness (`--enable-priority-and-fairness`, upstream's
 * apf controller): the FlowSchemas and PriorityLevelConfigurations, fed
 * from storage, decide each request's flow and level; each Limited level
 * has its seats and queues (queue-set.ts) and lends and borrows seats every
 * adjustment period (concurrency.ts). FlowSchemas get upstream's `Dangling`
 * condition. Mandatory objects missing from storage are used as upstream's
 * built-in ones, so a request always finds a level.
 */
import type { InformerFactory } from '../client/informer-factory.js'
import { followInformer, type InformerFollower } from '../client/informer.js'
import type { RequestInfo } from '../machinery/request-info.js'
import type { Metrics } from '../metrics/metrics.js'
import type { Logger } from '../logging/logger.js'
import { LOOPBACK_IDENTITY } from '../machinery/identities.js'
import type { StoredObjects } from '../client/stored-objects.js'
import { flowSchemas, priorityLevelConfigurations } from '../resources/groups/flowcontrol.js'
import { extended, type KubeObject, type UserInfo } from '../machinery/object.js'
import { BOOTSTRAP_FLOW_SCHEMAS, BOOTSTRAP_PRIORITY_LEVELS } from './bootstrap-objects.js'
import { byPrecedence, type CompiledFlowSchema, compileFlowSchema } from './classify.js'
import { allocateSeats, DEMAND_SMOOTHING, DemandIntegrator, type LevelLimits, levelLimits } from './concurrency.js'
import { LevelActivity, QueueSet } from './queue-set.js'
import { DroppedRequests } from './dropped-requests.js'

export interface FlowControlOptions {
  /** The server's seats: `--max-requests-inflight` plus `--max-mutating-requests-inflight`. */
  serverConcurrencyLimit: number
  /** Longest wait in a queue before a 429. */
  requestWaitLimitMs: number
  /** How often seats are lent and borrowed again. @default 10000 (upstream's) */
  adjustPeriodMs?: number
}

export interface PriorityLevel {
  readonly limits: LevelLimits
  /** Undefined for an Exempt level. */
  readonly queueSet?: QueueSet
  /** Its totals and running requests, for the debug dumps. */
  readonly activity: LevelActivity
}

export interface Classification {
  schema: KubeObject
  level: PriorityLevel
  /** The schema and the distinguisher: requests of one flow share a hand of queues. */
  flow: string
  /** The flow's distinguisher as upstream records it: empty for a level of fewer than two queues. */
  distinguisher: string
  /** Counts the request as dispatched (apiserver_flowcontrol_dispatched_requests_total) under its schema and level. */
  dispatched(): void
}

interface LevelState extends PriorityLevel {
  queueSet?: QueueSet
  limits: LevelLimits
  demand: DemandIntegrator
  smoothedDemand: number
}

interface SchemaState extends CompiledFlowSchema {
  /** The dispatched counter under this schema, per level it ran at. */
  readonly dispatchedAt: Map<string, { add(by?: number): void }>
}

const builtin = (kind: string, name: string, spec: Record<string, unknown>): KubeObject => ({
  apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
  kind,
  metadata: { name, uid: '' },
  spec,
})
const MANDATORY_LEVELS = BOOTSTRAP_PRIORITY_LEVELS.filter((o) => o.mandatory).map((o) => builtin('PriorityLevelConfiguration', o.name, o.spec))
const MANDATORY_SCHEMAS = BOOTSTRAP_FLOW_SCHEMAS.filter((o) => o.mandatory).map((o) => builtin('FlowSchema', o.name, o.spec))

const CATCH_ALL = 'catch-all'
const FIELD_MANAGER = 'api-priority-and-fairness-config-consumer-v1'

export class FlowControl {
  private readonly storedSchemas = new Map<string, KubeObject>()
  private readonly storedLevels = new Map<string, KubeObject>()
  private schemas: SchemaState[] = []
  private readonly levels = new Map<string, LevelState>()
  private readonly feeds: InformerFollower[] = []
  /** The rebuild waiting for the events of this turn to settle. */
  private rebuildTimer: ReturnType<typeof setTimeout> | undefined
  /** The stored objects changed since the last rebuild (start-up reads the same ones up to three times). */
  private changed = true
  /** The Dangling pass under way, and whether another event asked for one meanwhile. */
  private danglingPass: Promise<void> | undefined
  private danglingAgain = false
  /** Per schema, the resourceVersion whose Dangling condition a pass replaced: until its event comes, the snapshot is stale. */
  private readonly danglingWrittenOver = new Map<string, string>()
  private readonly adjuster: ReturnType<typeof setInterval>
  readonly ready: Promise<void>
  /** The refusals of each level, for the Retry-After of the next. */
  readonly droppedRequests: DroppedRequests

  constructor(
    private readonly stored: StoredObjects,
    informers: InformerFactory,
    private readonly metrics: Metrics,
    private readonly logger: Logger,
    private readonly now: () => Date,
    private readonly options: FlowControlOptions,
  ) {
    this.droppedRequests = new DroppedRequests(() => this.now().getTime())
    this.rebuild()
    const follow = (entry: typeof flowSchemas, into: Map<string, KubeObject>): InformerFollower =>
      followInformer(informers.informer(entry), (event, obj) => {
        if (!this.keep(into, event === 'delete' ? undefined : obj, obj.metadata.name ?? '')) return
        this.scheduleRebuild()
      })
    this.feeds.push(follow(flowSchemas, this.storedSchemas), follow(priorityLevelConfigurations, this.storedLevels))
    this.ready = Promise.all(this.feeds.map((f) => f.ready)).then(() => this.rebuild())
    this.adjuster = setInterval(() => this.adjustSeats(), options.adjustPeriodMs ?? 10_000)
    // A timer of the server's own must not keep an embedding program alive.
    ;(this.adjuster as { unref?: () => void }).unref?.()
  }

  /**
   * Resolves once the configuration is what storage holds now (the start-up
   * objects written meanwhile included, whose watch events may still be on
   * their way) and the status writes it calls for are done: a server is
   * ready with its flow schemas in force and no start-up write still to come.
   */
  async settle(): Promise<void> {
    await this.ready
    const read = async (entry: typeof flowSchemas, into: Map<string, KubeObject>): Promise<void> => {
      // Kept as the feeds' objects are, never changed: read-only, so the cache hands out its own (and their compiled form is reused).
      for (const obj of await this.stored.list(entry, '', { readOnly: true })) this.keep(into, obj, obj.metadata.name ?? '')
    }
    await Promise.all([read(flowSchemas, this.storedSchemas), read(priorityLevelConfigurations, this.storedLevels)])
    this.rebuild()
    while (this.danglingPass) await this.danglingPass
  }

  stop(): void {
    clearInterval(this.adjuster)
    clearTimeout(this.rebuildTimer)
    for (const feed of this.feeds) feed.stop()
  }

  /** The request's schema, level and flow: the first matching schema whose level exists. */
  classify(user: UserInfo, info: RequestInfo): Classification {
    for (const schema of this.schemas) {
      const level = this.levels.get(schema.levelName)
      if (level && schema.matches(user, info)) return this.classification(schema, level, schema.distinguish(user, info))
    }
    // No group of the catch-all schema (an identity without system:authenticated): upstream's catch-all all the same.
    const schema = this.schemas.find((s) => s.name === CATCH_ALL) as SchemaState
    return this.classification(schema, this.levels.get(CATCH_ALL) as LevelState, user.username)
  }

  private classification(schema: SchemaState, level: LevelState, distinguisher: string): Classification {
    let counter = schema.dispatchedAt.get(level.limits.name)
    if (!counter) {
      counter = this.metrics.counter('apiserver_flowcontrol_dispatched_requests_total', '[BETA] Number of requests executed by API Priority and Fairness', {
        flow_schema: schema.name,
        priority_level: level.limits.name,
      })
      schema.dispatchedAt.set(level.limits.name, counter)
    }
    const recorded = (level.limits.queuing?.queues ?? 0) > 1 ? distinguisher : ''
    return { schema: schema.object, level, flow: `${schema.name}\u0000${distinguisher}`, distinguisher: recorded, dispatched: counter.add }
  }

  /** The priority levels in force, by name (the debug dumps' order). */
  priorityLevels(): PriorityLevel[] {
    return [...this.levels.values()].sort((a, b) => (a.limits.name < b.limits.name ? -1 : a.limits.name > b.limits.name ? 1 : 0))
  }

  /**
   * On a timer rather than a microtask: start-up's writes of the default
   * configuration come as one burst of events (in memory, all within one
   * turn), and one rebuild after them does what one per event did.
   */
  private scheduleRebuild(): void {
    if (this.rebuildTimer !== undefined) return
    this.rebuildTimer = setTimeout(() => {
      this.rebuildTimer = undefined
      this.rebuild()
    }, 0)
  }

  /** Notes a stored object (undefined: deleted); whether that changed what is kept. */
  private keep(into: Map<string, KubeObject>, obj: KubeObject | undefined, name: string): boolean {
    if (into.get(name) === obj) return false
    if (obj) into.set(name, obj)
    else into.delete(name)
    this.changed = true
    return true
  }

  /** The configuration as stored, with upstream's mandatory objects where storage lacks them. */
  private rebuild(): void {
    if (!this.changed) return
    this.changed = false
    const levels = new Map(this.storedLevels)
    for (const pl of MANDATORY_LEVELS) if (!levels.has(pl.metadata.name ?? '')) levels.set(pl.metadata.name ?? '', pl)
    const schemas = new Map(this.storedSchemas)
    for (const fs of MANDATORY_SCHEMAS) if (!schemas.has(fs.metadata.name ?? '')) schemas.set(fs.metadata.name ?? '', fs)
    this.schemas = [...schemas.values()].sort(byPrecedence).map((fs) => extended(compileFlowSchema(fs), { dispatchedAt: new Map() }))

    const limits = levelLimits([...levels.values()], this.options.serverConcurrencyLimit)
    const kept = new Set<string>()
    for (const l of limits) {
      kept.add(l.name)
      const state = this.levels.get(l.name)
      if (state && JSON.stringify(state.limits.queuing) === JSON.stringify(l.queuing) && state.limits.exempt === l.exempt) {
        state.limits = l
        if (state.queueSet) {
          state.queueSet.limit = l.nominalCL
          state.queueSet.dispatch()
        }
      } else {
        // New queues, the same totals: upstream reconfigures the level's one queue set.
        this.levels.set(l.name, this.newLevel(l, state && state.limits.exempt === l.exempt ? state.activity : undefined))
      }
      this.metrics.setGauge('apiserver_flowcontrol_nominal_limit_seats', '[BETA] Nominal number of execution seats configured for each priority level', { priority_level: l.name }, l.nominalCL)
    }
    for (const name of [...this.levels.keys()]) if (!kept.has(name)) this.levels.delete(name)
    this.requestDanglingPass()
  }

  /**
   * One pass at a time, and one more after it when events came meanwhile:
   * passes side by side would each write the same condition (at start-up,
   * every created object's event would start another pass over every schema).
   */
  private requestDanglingPass(): void {
    if (this.danglingPass) {
      this.danglingAgain = true
      return
    }
    this.danglingPass = (async () => {
      do {
        this.danglingAgain = false
        await this.markDangling()
      } while (this.danglingAgain)
    })().finally(() => {
      this.danglingPass = undefined
    })
  }

  private newLevel(limits: LevelLimits, activity?: LevelActivity): LevelState {
    const clock = (): number => this.now().getTime()
    const state: LevelState = { limits, activity: activity ?? new LevelActivity(clock), demand: new DemandIntegrator(clock), smoothedDemand: limits.nominalCL }
    if (!limits.exempt) {
      // The executing and queued gauges, by flow schema too, are kept by the filter (http/filters/priority-and-fairness.ts).
      state.queueSet = new QueueSet(
        limits.nominalCL,
        limits.queuing,
        () => {
          const set = state.queueSet as QueueSet
          state.demand.set(set.executing + set.waiting)
        },
        state.activity,
      )
    }
    return state
  }

  /** Lends and borrows seats from each level's smoothed demand (upstream's updateBorrowing). */
  private adjustSeats(): void {
    const levels = [...this.levels.values()]
    const items = levels.map((level) => {
      level.smoothedDemand = Math.max(level.demand.reset(), DEMAND_SMOOTHING * level.smoothedDemand)
      const { minCL, maxCL } = level.limits
      return { lower: minCL, upper: maxCL, target: Math.min(maxCL, Math.max(minCL, level.smoothedDemand)) }
    })
    const seats = allocateSeats(this.options.serverConcurrencyLimit, items)
    levels.forEach((level, i) => {
      const limit = Math.round(seats[i] ?? level.limits.nominalCL)
      this.metrics.setGauge('apiserver_flowcontrol_current_limit_seats', '[ALPHA] Current derived number of execution seats available to each priority level', { priority_level: level.limits.name }, limit)
      if (!level.queueSet) return
      level.queueSet.limit = Math.max(1, limit)
      level.queueSet.dispatch()
    })
  }

  /** Upstream's `Dangling` condition on each stored FlowSchema: whether its priority level exists. */
  private async markDangling(): Promise<void> {
    for (const schema of this.storedSchemas.values()) {
      const level = compileFlowSchema(schema).levelName
      const dangling = !this.storedLevels.has(level)
      const condition = {
        type: 'Dangling',
        status: dangling ? 'True' : 'False',
        reason: dangling ? 'NotFound' : 'Found',
        message: dangling
          ? `This FlowSchema references the PriorityLevelConfiguration object named "${level}" but there is no such object`
          : `This FlowSchema references the PriorityLevelConfiguration object named "${level}" and it exists`,
      }
      const conditions = ((schema['status'] as { conditions?: Record<string, unknown>[] } | undefined)?.conditions ?? []).filter((c) => c['type'] === 'Dangling')
      const current = conditions[0]
      if (current && current['status'] === condition.status && current['message'] === condition.message) continue
      const name = schema.metadata.name ?? ''
      const seen = schema.metadata.resourceVersion ?? ''
      if (this.danglingWrittenOver.get(name) === seen) continue
      try {
        this.danglingWrittenOver.set(name, seen)
        await this.stored.update(
          flowSchemas,
          '',
          name,
          (stored) => {
            const status = (stored['status'] ?? {}) as { conditions?: Record<string, unknown>[] }
            const others = (status.conditions ?? []).filter((c) => c['type'] !== 'Dangling')
            return { ...stored, status: { ...status, conditions: [...others, { ...condition, lastTransitionTime: this.now().toISOString().replace(/\.\d+Z$/, 'Z') }] } }
          },
          { user: LOOPBACK_IDENTITY, now: this.now(), fieldManager: FIELD_MANAGER },
          'status',
        )
      } catch (err) {
        // Deleted meanwhile, or another server wrote it first: the next event brings the object again.
        this.danglingWrittenOver.delete(name)
        this.logger.debug({ module: 'flow-control', flowSchema: schema.metadata.name, err: String(err) }, 'cannot write the Dangling condition')
      }
    }
  }
}
