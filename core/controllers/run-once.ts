/**
 * The controllers that must run once in a cluster (upstream runs them in
 * kube-controller-manager, one leader at a time): each registers with
 * `runOnce`, and the server starts it at once when it is alone on its store,
 * or while it holds the controllers' lease when it shares the store with
 * other servers (core/controllers/leader-election.ts).
 */
import type { Logger } from '../logging/logger.js'

export type StopController = () => void

export interface RunOnce {
  /** Starts `start` whenever this server is the one to run it; the function it returns (or resolves to) stops it. */
  (name: string, start: () => StopController | Promise<StopController>): void
}

interface Entry {
  start: () => StopController | Promise<StopController>
  running?: Promise<StopController | undefined>
}

/** A set of controllers started and stopped together. */
export class ControllerSet {
  private readonly entries = new Map<string, Entry>()
  private active = false

  constructor(private readonly logger: Logger) {}

  readonly register: RunOnce = (name, start) => {
    this.entries.set(name, { start })
    if (this.active) this.startAll()
  }

  startAll(): void {
    this.active = true
    for (const [name, entry] of this.entries) {
      if (entry.running) continue
      entry.running = (async () => entry.start())().catch((err: unknown) => {
        this.logger.error({ controller: name, err: String(err) }, 'controller failed to start')
        return undefined
      })
    }
  }

  /**
   * Resolves once every controller running now has finished starting (its
   * initial pass included, for those whose start resolves after it). A lone
   * server waits for this before it reports ready, so that what its
   * controllers create at start exists before the first request.
   */
  async started(): Promise<void> {
    await Promise.all([...this.entries.values()].map((entry) => entry.running))
  }

  stopAll(): void {
    this.active = false
    for (const entry of this.entries.values()) {
      const running = entry.running
      delete entry.running
      // A controller still starting is stopped once it has.
      void running?.then((stop) => stop?.())
    }
  }
}
