/**
 * Long synchronous work of one request cut into slices, so that the other
 * requests on the same thread are served between them. Work checks `spent`
 * at its natural steps and yields only once the slice has run past the
 * budget. The budget is the thread's, not the request's: sliced work of
 * every request on the thread takes one slice per turn of the event loop.
 */

/** How long sliced work may hold the thread before it lets the event loop run. */
export const SLICE_BUDGET_MS = 0.5

/** A request's budget between the steps of a write (TimeSlice.startingNow). */
export const STEP_BUDGET_MS = 2

interface YieldingScheduler {
  yield(): Promise<void>
}

type Immediate = (callback: () => void) => unknown

/**
 * A macrotask, so that timers, I/O and other requests' promises all run
 * before `callback`, without a timer's delay: `scheduler.yield()` where the
 * runtime has it, else `setImmediate` (Node, Bun), else a message through a
 * MessageChannel (Deno, workers, browsers). A zero-delay timer is the last
 * resort only: runtimes clamp it to a millisecond or more, which would
 * leave the thread idle after every slice.
 */
function macrotask(callback: () => void): void {
  const g = globalThis as { scheduler?: Partial<YieldingScheduler>; setImmediate?: Immediate }
  if (typeof g.scheduler?.yield === 'function') {
    void g.scheduler.yield().then(callback)
    return
  }
  const immediate = g.setImmediate
  if (typeof immediate === 'function') {
    immediate(callback)
    return
  }
  if (typeof MessageChannel === 'function') {
    const channel = new MessageChannel()
    // The Web API's handler property (Node's types describe its port as an event emitter instead).
    const receiver = channel.port1 as unknown as { onmessage: (() => void) | null; close(): void }
    receiver.onmessage = () => {
      receiver.close()
      callback()
    }
    channel.port2.postMessage(null)
    return
  }
  setTimeout(callback, 0)
}

/** Resolves in a macrotask of its own: whatever I/O and timers are ready run first. */
export function nextMacrotask(): Promise<void> {
  return new Promise((resolve) => macrotask(resolve))
}

/**
 * Sliced work waiting to resume, whichever request it belongs to. One of
 * them resumes per macrotask, in turn, so that however many requests are
 * sliced at once, the thread goes back to its I/O after one slice.
 */
const waiting: Array<() => void> = []
/** When sliced work last resumed: the slice being run started then, whichever request runs it. */
let resumedAt = -Infinity

function resumeNext(): void {
  const next = waiting.shift()
  // Queued from a macrotask, the next one runs in the next turn of the event loop, after its I/O.
  if (waiting.length > 0) macrotask(resumeNext)
  resumedAt = performance.now()
  next?.()
}

/** Lets the event loop run (timers, I/O, other requests), then resumes in turn with other sliced work. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve)
    if (waiting.length === 1) macrotask(resumeNext)
  })
}

/**
 * A slice's budget counts from when sliced work last resumed, on this
 * thread, whichever request it was: the steps of one request (reading,
 * decoding, parsing) and the slices of several cannot add their budgets up
 * within one turn of the event loop. Work that starts in a turn of its own
 * (a request that just arrived) may find the budget spent and yield at its
 * first checkpoint: it then waits one turn.
 */
export class TimeSlice {
  /** When this slice's own budget began counting (startingNow); the thread's slice counts from resumedAt. */
  private startedAt = -Infinity

  constructor(private readonly budgetMs = SLICE_BUDGET_MS) {}

  /**
   * A slice whose budget counts from now (or from when sliced work last
   * resumed, if later), for the steps of one request over a large object
   * (a write of megabytes, whose every step is a pass of its own over the
   * object): the other requests run between its steps. A request that just
   * arrived does not find the thread's budget spent. The budget is wall
   * time, which other requests' turns fill too: a request of ordinary size
   * runs its steps without one (they would yield only for the others).
   */
  static startingNow(budgetMs = STEP_BUDGET_MS): TimeSlice {
    const slice = new TimeSlice(budgetMs)
    slice.startedAt = performance.now()
    return slice
  }

  /** True once the current slice has run past its budget. */
  get spent(): boolean {
    return performance.now() - Math.max(resumedAt, this.startedAt) >= this.budgetMs
  }

  /** Lets other work run, then starts a new slice. */
  async yield(): Promise<void> {
    await yieldToEventLoop()
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

/**
 * The values (keys copied, elements written, fields compared) a walk over a
 * large object handles between two checkpoints: a few hundred microseconds
 * of work, so that a slice holds several and the checkpoints cost little.
 * A level with more entries than this yields after taking its keys too.
 */
export const UNITS_PER_STEP = 2048

/**
 * The work a walk has done since its last checkpoint, counted in units
 * (values copied, elements written) rather than by the size of each part:
 * telling the size of a level of 250,000 keys is itself a pass over them.
 */
export class StepCounter {
  private sinceCheckpoint = 0

  constructor(private readonly unitsPerStep = UNITS_PER_STEP) {}

  /** Counts `units` more; true when a step's worth is done (and starts the next). */
  add(units = 1): boolean {
    this.sinceCheckpoint += units
    if (this.sinceCheckpoint < this.unitsPerStep) return false
    this.sinceCheckpoint = 0
    return true
  }
}

/** Runs the work to its end without letting anything else run. */
export function runAtOnce<T>(work: Checkpointed<T>): T {
  for (;;) {
    const step = work.next()
    if (step.done) return step.value
  }
}

/**
 * Runs the work at once when it ends before its first checkpoint (a small
 * input: no promise made), else in slices from there on.
 */
export function runAtOnceOrInSlices<T>(work: Checkpointed<T>): T | Promise<T> {
  const first = work.next()
  if (first.done) return first.value
  return runInSlices(work, TimeSlice.startingNow())
}

/** Runs the work, letting other requests run whenever a checkpoint finds the slice spent. */
export async function runInSlices<T>(work: Checkpointed<T>, slice = new TimeSlice()): Promise<T> {
  for (;;) {
    const step = work.next()
    if (step.done) return step.value
    await slice.pause()
  }
}

/**
 * The count of the checkpointed passes that keep no counter of their own (a
 * kind's defaults and validation, written as generators). One for the
 * thread: only one pass runs between two checkpoints.
 */
const sharedCounter = new StepCounter()

/** Counts `units` of the running pass's work: true when it should yield at its next checkpoint. */
export function checkpointDue(units = 1): boolean {
  return sharedCounter.add(units)
}

/** Whether a hook answered with work still to run (a checkpointed generator) rather than with its value. */
export function isCheckpointed<T>(value: T | Checkpointed<T>): value is Checkpointed<T> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const candidate = value as { next?: unknown; [Symbol.iterator]?: unknown }
  return typeof candidate.next === 'function' && typeof candidate[Symbol.iterator] === 'function'
}

/** A hook's value, running its work at once when it answered with work. */
export function valueAtOnce<T>(value: T | Checkpointed<T>): T {
  return isCheckpointed(value) ? runAtOnce(value) : value
}

/** A hook's value: work it answered with runs at once while small, in slices from its first checkpoint on. */
export function settled<T>(answer: T | Checkpointed<T>): T | Promise<T> {
  return isCheckpointed(answer) ? runAtOnceOrInSlices(answer) : answer
}
