/**
 * Long synchronous work of one request cut into slices, so that the other
 * requests on the same thread are served between them. Work checks `spent`
 * at its natural steps and yields only once it has run past the budget:
 * small inputs never pay for a yield.
 */

/** How long one request may hold the thread before it lets others run. */
export const SLICE_BUDGET_MS = 0.5

interface YieldingScheduler {
  yield(): Promise<void>
}

type Immediate = (callback: () => void) => unknown

/**
 * A macrotask, so that timers, I/O and other requests' promises all run
 * before the work resumes, without a timer's delay: `scheduler.yield()`
 * where the runtime has it, else `setImmediate` (Node, Bun), else a message
 * through a MessageChannel (Deno, workers, browsers). A zero-delay timer is
 * the last resort only: runtimes clamp it to a millisecond or more, which
 * would leave the thread idle after every slice.
 */
export function yieldToEventLoop(): Promise<void> {
  const g = globalThis as { scheduler?: Partial<YieldingScheduler>; setImmediate?: Immediate }
  if (typeof g.scheduler?.yield === 'function') return g.scheduler.yield()
  const immediate = g.setImmediate
  if (typeof immediate === 'function') return new Promise((resolve) => immediate(resolve))
  if (typeof MessageChannel === 'function') {
    return new Promise((resolve) => {
      const channel = new MessageChannel()
      // The Web API's handler property (Node's types describe its port as an event emitter instead).
      const receiver = channel.port1 as unknown as { onmessage: (() => void) | null; close(): void }
      receiver.onmessage = () => {
        receiver.close()
        resolve()
      }
      channel.port2.postMessage(null)
    })
  }
  return new Promise((resolve) => setTimeout(resolve, 0))
}

export class TimeSlice {
  private start = performance.now()

  constructor(private readonly budgetMs = SLICE_BUDGET_MS) {}

  /** True once the current slice has run past its budget. */
  get spent(): boolean {
    return performance.now() - this.start >= this.budgetMs
  }

  /** Lets other work run, then starts a new slice. */
  async yield(): Promise<void> {
    await yieldToEventLoop()
    this.start = performance.now()
  }

  /** Yields when the slice is spent; resolves at once otherwise. */
  async pause(): Promise<void> {
    if (this.spent) await this.yield()
  }
}

/**
 * Work written once as a generator that yields at its checkpoints (after a
 * term, every few thousand characters), run either at once or in slices.
 */
export type Checkpointed<T> = Generator<void, T, void>

/** Runs the work to its end without letting anything else run. */
export function runAtOnce<T>(work: Checkpointed<T>): T {
  for (;;) {
    const step = work.next()
    if (step.done) return step.value
  }
}

/** Runs the work, letting other requests run whenever a checkpoint finds the slice spent. */
export async function runInSlices<T>(work: Checkpointed<T>, slice = new TimeSlice()): Promise<T> {
  for (;;) {
    const step = work.next()
    if (step.done) return step.value
    await slice.pause()
  }
}
