/**
 * JSON.stringify's text of plain JSON data, written as checkpointed work.
 * JSON.stringify is one piece: the FieldsV1 of a ConfigMap of 250,000 keys
 * (raw JSON inside a protobuf message) took 120 ms to write. Here the text
 * is written a piece per value, with a checkpoint every few thousand, and
 * joined at the end; a value that is not plain data (a boxed string, an
 * instance of a class) is written by JSON.stringify itself, and `toJSON` is
 * called as JSON.stringify calls it.
 */
import { StepCounter, type Checkpointed } from './time-slice.js'

/** Values written between two checkpoints. */
const VALUES_PER_STEP = 4096
const valuesWritten = new StepCounter(VALUES_PER_STEP)

/** What JSON leaves out of an object, and writes as null in an array. */
const unwritable = (v: unknown): boolean => v === undefined || typeof v === 'function' || typeof v === 'symbol'

/** A value as JSON.stringify goes on with it: what its `toJSON` gives, called with the key it is under. */
function toJsonOf(value: unknown, key: string): unknown {
  if (typeof value !== 'object' || value === null) return value
  const toJSON = (value as { toJSON?: unknown }).toJSON
  return typeof toJSON === 'function' ? (toJSON as (key: string) => unknown).call(value, key) : value
}

function isPlainContainer(v: object): boolean {
  if (Array.isArray(v)) return true
  const proto = Object.getPrototypeOf(v) as unknown
  return proto === Object.prototype || proto === null
}

/** The text written so far: the pieces of the current step, and the steps before joined a step at a time. */
class Text {
  private pieces: string[] = []
  private readonly steps: string[] = []

  push(...pieces: string[]): void {
    for (const piece of pieces) this.pieces.push(piece)
  }

  /** Joins this step's pieces: joining them all at the end would be one piece of work again. */
  endStep(): void {
    this.steps.push(this.pieces.join(''))
    this.pieces = []
  }

  joined(): string {
    this.endStep()
    return this.steps.join('')
  }
}

/** JSON.stringify(value) (undefined where it gives undefined), in steps. */
export function* jsonTextInSteps(value: unknown): Checkpointed<string | undefined> {
  const resolved = toJsonOf(value, '')
  if (unwritable(resolved)) return undefined
  const text = new Text()
  yield* write(resolved, text)
  return text.joined()
}

/** A checkpoint once a step's worth of values is written. */
function* counted(text: Text): Checkpointed<void> {
  if (!valuesWritten.add()) return
  text.endStep()
  yield
}

function* write(value: unknown, text: Text): Checkpointed<void> {
  if (typeof value !== 'object' || value === null || !isPlainContainer(value)) {
    text.push(JSON.stringify(value) ?? 'null')
    return
  }
  if (Array.isArray(value)) {
    text.push('[')
    for (let i = 0; i < value.length; i++) {
      if (i > 0) text.push(',')
      const item = toJsonOf(value[i], String(i))
      if (unwritable(item)) text.push('null')
      else yield* write(item, text)
      yield* counted(text)
    }
    text.push(']')
    return
  }
  const object = value as Record<string, unknown>
  const keys = Object.keys(object)
  if (keys.length > VALUES_PER_STEP) yield
  text.push('{')
  let first = true
  for (const key of keys) {
    const item = toJsonOf(object[key], key)
    if (unwritable(item)) continue
    text.push(first ? JSON.stringify(key) : `,${JSON.stringify(key)}`, ':')
    first = false
    yield* write(item, text)
    yield* counted(text)
  }
  text.push('}')
}
