/**
 * What the server's parts start and stop, registered by each part as it is
 * built (upstream's AddPostStartHook and AddPreShutdownHook) instead of
 * kept in hand-written lists: start-up runs the registered work phase by
 * phase, each phase's work side by side; every named piece of work gets the
 * readiness check upstream names it by, failing until the work is done and
 * for good once it failed; shutdown runs the registered stops stage by
 * stage, in the order they were registered.
 */
import type { HealthCheck } from './health-check.js'
import { StartupParts } from './startup-parts.js'

/** The start-up phases, in the order they run: a phase starts once every piece of work of the one before is done. */
export const STARTUP_PHASES = [
  /** Caches and indexes load; bootstrap objects are written; informers sync. */
  'load',
  /**
   * What needs the loaded state, side by side as upstream's post-start hooks
   * run: priority and fairness settling its configuration, whom extension
   * servers trust published in kube-system, and the bootstrap controller's
   * `kubernetes` Service and its endpoints. None waits for another; run one
   * after the other, their writes' round trips to the store added up.
   */
  'bootstrap',
  /** The run-once controllers' first pass (default service accounts, storage protection ...). */
  'controllers',
  /** Local APIServices registered for every served group version. */
  'register',
  /** The embedder's seed objects. */
  'seed',
  /** ClusterRole aggregation's first pass, where this server runs it: the aggregated roles filled. */
  'aggregate',
] as const
export type StartupPhase = (typeof STARTUP_PHASES)[number]

/**
 * The stages of shutdown: components stop their background work, then the
 * open watches end (the server's, not the hooks'), then what buffers output
 * flushes it, then the storage's own watches close.
 */
export const SHUTDOWN_STAGES = ['components', 'flush', 'storage'] as const
export type ShutdownStage = (typeof SHUTDOWN_STAGES)[number]

interface StartupWork {
  phase: StartupPhase
  /** The readiness check it counts towards; none: awaited, not checked. */
  check: string | undefined
  run: () => Promise<unknown> | undefined
}

/** A built part with a life cycle: ready once it can answer, stopped at shutdown. */
export interface ManagedPart {
  readonly ready?: Promise<unknown> | undefined
  stop?(): void | Promise<void>
}

export class ServerHooks {
  private readonly work: StartupWork[] = []
  private readonly stops = new Map<ShutdownStage, (() => void | Promise<void>)[]>(SHUTDOWN_STAGES.map((s) => [s, []]))
  private readonly checkNames: string[] = []
  /** Checks named after other work's: upstream runs them as hooks of their own, here one piece of work stands for them. */
  private readonly aliases = new Map<string, string>()
  private readonly extraChecks: HealthCheck[] = []
  private readonly parts = new StartupParts()
  private readonly phaseDone = new Map<StartupPhase, { promise: Promise<void>; resolve(): void }>(
    STARTUP_PHASES.map((phase) => {
      let resolve!: () => void
      const promise = new Promise<void>((r) => (resolve = r))
      return [phase, { promise, resolve }]
    }),
  )

  /** Resolves once every piece of work of `phase` is done (never, when start-up failed before). */
  after(phase: StartupPhase): Promise<void> {
    return this.phaseDone.get(phase)!.promise
  }

  /** Work to run in `phase`; with a `check`, the readiness check of that name waits for it. */
  onStart(phase: StartupPhase, check: string | undefined, run: () => Promise<unknown> | undefined): void {
    this.work.push({ phase, check, run })
    if (check && !this.checkNames.includes(check)) this.checkNames.push(check)
  }

  /**
   * A check `name` that answers as the start-up work named `of` does:
   * upstream's hooks that this server's one piece of work stands for (the
   * CRD controller for apiextensions' informers, controllers and sync).
   */
  alias(name: string, of: string): void {
    this.aliases.set(name, of)
    if (!this.checkNames.includes(name)) this.checkNames.push(name)
  }

  /** Called at shutdown, in `stage`, after what registered before it in that stage. */
  onShutdown(stop: () => void | Promise<void>, stage: ShutdownStage = 'components'): void {
    this.stops.get(stage)!.push(stop)
  }

  /** A part's readiness under `check` in the load phase, and its stop at shutdown. */
  manage(check: string | undefined, part: ManagedPart | undefined): void {
    if (!part) return
    if (part.ready) {
      const ready = part.ready
      this.onStart('load', check, () => ready)
    }
    if (part.stop) this.onShutdown(() => part.stop!())
  }

  /**
   * A check a part answers itself (a post-start hook's), listed among the
   * health checks in registration order.
   */
  addCheck(check: HealthCheck): void {
    this.extraChecks.push(check)
  }

  /** The checks parts answer themselves, in registration order. */
  ownChecks(): HealthCheck[] {
    return [...this.extraChecks]
  }

  /** The readiness checks of the named start-up work (and their aliases), in the order they were first named. */
  startupChecks(): HealthCheck[] {
    return this.checkNames.map((name) => this.check(name))
  }

  /** The check of the start-up work named `name`: failing until all of it has finished, and after any of it failed. */
  check(name: string): HealthCheck {
    const of = this.aliases.get(name)
    return of === undefined ? this.parts.check(name) : { name, check: this.parts.check(of).check }
  }

  /** The check of the first piece of work that failed, once one has. */
  get firstFailure(): string | undefined {
    return this.parts.firstFailure
  }

  /** Runs the start-up work phase by phase; rejects with the first failure, after which no later phase runs. */
  async start(): Promise<void> {
    for (const phase of STARTUP_PHASES) {
      const now = this.work.filter((w) => w.phase === phase)
      await Promise.all(now.map((w) => (w.check ? this.parts.part(w.check, w.run()) : w.run())))
      this.phaseDone.get(phase)!.resolve()
    }
  }

  /** Runs every stop of `stage`, one after another, in registration order. */
  async shutdown(stage: ShutdownStage): Promise<void> {
    for (const stop of this.stops.get(stage)!) await stop()
  }
}
