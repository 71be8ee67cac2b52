/**
 * The steps of a write over a large object, with the other requests let in
 * between them. Each step of a write (recording ownership, admission,
 * validation, the encoding the store keeps) is a pass over the whole
 * object: for an object of megabytes, one pass holds the thread for
 * hundreds of milliseconds, and all of them together for seconds. A write
 * of an ordinary object runs its steps at once, as before: a yield would
 * only put it behind the others.
 */
import { appendAllInSteps } from '../machinery/append-all.js'
import { type FieldError, withFieldErrorCapInSteps } from '../machinery/field.js'
import { hasMoreValuesThan } from '../machinery/json-size.js'
import { isCheckpointed, runAtOnce, runAtOnceOrInSlices, runInSlices, TimeSlice, type Checkpointed } from '../machinery/time-slice.js'

/** Objects of more values (objects, arrays, scalars) than this have their write run in slices: some milliseconds a pass. */
export const SLICED_WRITE_VALUES = 5_000

export class WriteSteps {
  private static readonly atOnce = new WriteSteps(undefined)

  private constructor(private readonly slice: TimeSlice | undefined) {}

  /** Steps in slices when any of the objects is large; at once otherwise. */
  static for(...objects: unknown[]): WriteSteps {
    return objects.some((o) => hasMoreValuesThan(o, SLICED_WRITE_VALUES)) ? new WriteSteps(TimeSlice.startingNow()) : WriteSteps.atOnce
  }

  get sliced(): boolean {
    return this.slice !== undefined
  }

  /** Between two steps: lets the other requests run once this request's slice is spent. */
  pause(): Promise<void> | undefined {
    return this.slice?.pause()
  }

  /** After a pass over the object made before the steps began counting (the store's copy for an update): lets the other requests run now. */
  yield(): Promise<void> | undefined {
    return this.slice?.yield()
  }

  /** A step written as a generator, yielding between its own passes. */
  async run<T>(work: Checkpointed<T>): Promise<T> {
    return this.slice ? runInSlices(work, this.slice) : runAtOnce(work)
  }

  /**
   * A strategy hook's value, its work run in steps when it answered with
   * work (see Strategy). A kind's work can be long for a small object too (a
   * schema of many junctors over a few thousand values): run at once, it
   * goes on in slices from a checkpoint that finds it long.
   */
  async settle<T>(answer: T | Checkpointed<T>): Promise<T> {
    return isCheckpointed(answer) ? this.runHook(answer) : answer
  }

  /**
   * A write's validation: the generic rules (metadata's), then the kind's,
   * which may answer with work in steps; the first MAX_FIELD_ERRORS errors
   * are kept, the others counted.
   */
  validate(generic: () => Checkpointed<FieldError[]>, kind: () => FieldError[] | Checkpointed<FieldError[]> | undefined): Promise<FieldError[]> {
    return this.runHook(withFieldErrorCapInSteps(validation(generic, kind)))
  }

  private async runHook<T>(work: Checkpointed<T>): Promise<T> {
    return this.slice ? runInSlices(work, this.slice) : runAtOnceOrInSlices(work)
  }
}

function* validation(generic: () => Checkpointed<FieldError[]>, kind: () => FieldError[] | Checkpointed<FieldError[]> | undefined): Checkpointed<FieldError[]> {
  const errs = yield* generic()
  const own = kind()
  yield* appendAllInSteps(errs, (isCheckpointed(own) ? yield* own : own) ?? [])
  return errs
}
