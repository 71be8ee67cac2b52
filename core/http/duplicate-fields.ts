/**
 * Duplicate fields in a request body, which JSON.parse and YAML parsers
 * silently resolve (the last one wins) but upstream's strict decoder reports
 * (`duplicate field "spec.replicas"`) for field validation. YAML bodies
 * find theirs as they are decoded (yaml-body.ts).
 */
import { goStrconvQuote } from '../machinery/go-strconv.js'
import { jsonStringEnd, jsonStringEndInSteps } from '../machinery/json-strings.js'
import { type Checkpointed, runAtOnce } from '../machinery/time-slice.js'

/**
 * One open object or array. Frames are reused once closed (nothing refers
 * to a closed one), and paths are written only to name a duplicate: a body
 * of megabytes would otherwise allocate a path per value and a Set per object.
 */
interface Frame {
  /** Objects: the keys seen so far, in a list while few, then a Set. Arrays: undefined. */
  keys: string[] | Set<string> | undefined
  /** Arrays: the element being read. */
  index: number
  /** Objects: the key of the value being read. */
  key: string
  /** The frame this container sits in, and its place there (a key or an index), to name a duplicate. */
  parent: Frame | undefined
  slot: string | number
}

/** Keys looked up in a list up to this many, in a Set beyond. */
const LIST_KEYS = 16

function seenBefore(frame: Frame, key: string): boolean {
  const keys = frame.keys!
  if (keys instanceof Set) {
    if (keys.has(key)) return true
    keys.add(key)
    return false
  }
  if (keys.includes(key)) return true
  if (keys.length < LIST_KEYS) keys.push(key)
  else frame.keys = new Set([...keys, key])
  return false
}

const childPath = (path: string, slot: string | number) => (typeof slot === 'number' ? `${path}[${slot}]` : path ? `${path}.${slot}` : slot)

/** The path of the value a frame stands for, as upstream names it (`spec.containers[0]`). */
function pathOf(frame: Frame): string {
  const slots: Array<string | number> = []
  for (let f: Frame | undefined = frame; f?.parent; f = f.parent) slots.push(f.slot)
  let path = ''
  for (let i = slots.length - 1; i >= 0; i--) path = childPath(path, slots[i]!)
  return path
}

/**
 * The fields that appear more than once in their object, in document order
 * and upstream's words (`duplicate field "spec.replicas"`), for a text
 * JSON.parse has already accepted.
 */
export function duplicateJsonFields(text: string): string[] {
  return runAtOnce(duplicateJsonFieldsWalk(text))
}

/** Characters scanned between two checkpoints. */
const RUN = 1 << 16

/** The same scan with checkpoints, for bodies of megabytes (runInSlices). */
export function* duplicateJsonFieldsWalk(text: string): Checkpointed<string[]> {
  const found: string[] = []
  let checkpoint = RUN
  const frames: Frame[] = []
  let depth = 0
  let expectKey = false
  const open = (isObject: boolean): void => {
    const parent = depth > 0 ? frames[depth - 1] : undefined
    const slot = parent === undefined ? '' : parent.keys ? parent.key : parent.index
    let frame = frames[depth]
    if (frame === undefined) frames.push((frame = { keys: undefined, index: 0, key: '', parent, slot }))
    else {
      frame.index = 0
      frame.key = ''
      frame.parent = parent
      frame.slot = slot
    }
    if (!isObject) frame.keys = undefined
    else if (Array.isArray(frame.keys)) frame.keys.length = 0
    else frame.keys = []
    depth++
  }
  for (let i = 0; i < text.length; i++) {
    if (i >= checkpoint) {
      checkpoint = i + RUN
      yield
    }
    const c = text.charCodeAt(i)
    if (c === 0x22 /* " */) {
      // Skip the string; most end at once, a long one with checkpoints (it may be megabytes long).
      let end = jsonStringEnd(text, i + 1, Math.min(text.length, checkpoint))
      if (end < 0) ({ end, checkpoint } = yield* jsonStringEndInSteps(text, ~end, checkpoint, RUN))
      const top = depth > 0 ? frames[depth - 1]! : undefined
      if (expectKey && top?.keys) {
        const raw = text.slice(i + 1, end)
        const key = raw.includes('\\') ? (JSON.parse(text.slice(i, end + 1)) as string) : raw
        if (seenBefore(top, key)) found.push(`duplicate field ${goStrconvQuote(childPath(pathOf(top), key))}`)
        top.key = key
        expectKey = false
      }
      i = end
    } else if (c === 0x7b /* { */) {
      open(true)
      expectKey = true
    } else if (c === 0x5b /* [ */) {
      open(false)
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      if (depth > 0) depth--
    } else if (c === 0x2c /* , */) {
      const top = depth > 0 ? frames[depth - 1]! : undefined
      if (top?.keys) expectKey = true
      else if (top) top.index++
    }
  }
  return found
}
