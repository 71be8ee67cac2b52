/**
 * JSON text to data with checkpoints (see time-slice.ts), for bodies of
 * megabytes: `JSON.parse` of 3 MiB of small objects holds the thread for
 * tens of milliseconds, while this parse yields every slice. It builds what
 * `JSON.parse` builds (last duplicate key wins in the first one's place,
 * `__proto__` an own field). Text it cannot read yields `undefined`, and
 * the caller lets `JSON.parse` say why in its words.
 */
import type { Checkpointed } from '../machinery/time-slice.js'

/** Values built, or characters of one string scanned, between two checkpoints. */
const STEP = 1024
const STRING_RUN = 1 << 16

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y

type Container = { array: unknown[]; object?: undefined } | { object: Record<string, unknown>; key: string; array?: undefined }

class Unreadable extends Error {}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09
}

function setField(object: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true })
  else object[key] = value
}

export function* parseJsonWalk(text: string): Checkpointed<{ value: unknown } | undefined> {
  try {
    return { value: yield* walk(text) }
  } catch (err) {
    if (err instanceof Unreadable) return undefined
    throw err
  }
}

function* walk(text: string): Checkpointed<unknown> {
  const n = text.length
  let i = 0
  const stack: Container[] = []
  let built = 0
  const skipSpace = (): void => {
    while (i < n && isSpace(text.charCodeAt(i))) i++
  }

  function* string(): Checkpointed<string> {
    const start = i // at the opening quote
    let escaped = false
    let checkpoint = i + STRING_RUN
    for (i++; ; i++) {
      if (i >= n) throw new Unreadable()
      if (i >= checkpoint) {
        checkpoint = i + STRING_RUN
        yield
      }
      const c = text.charCodeAt(i)
      if (c === 0x22) break
      if (c < 0x20) throw new Unreadable()
      if (c === 0x5c) {
        escaped = true
        i++
      }
    }
    i++
    if (!escaped) return text.slice(start + 1, i - 1)
    try {
      return JSON.parse(text.slice(start, i)) as string
    } catch {
      throw new Unreadable()
    }
  }

  function* scalarOrOpen(): Checkpointed<{ value: unknown } | undefined> {
    skipSpace()
    const c = text.charCodeAt(i)
    if (c === 0x7b /* { */) {
      i++
      skipSpace()
      if (text.charCodeAt(i) === 0x7d) {
        i++
        return { value: {} }
      }
      if (text.charCodeAt(i) !== 0x22) throw new Unreadable()
      const key = yield* string()
      skipSpace()
      if (text.charCodeAt(i++) !== 0x3a /* : */) throw new Unreadable()
      stack.push({ object: {}, key })
      return undefined
    }
    if (c === 0x5b /* [ */) {
      i++
      skipSpace()
      if (text.charCodeAt(i) === 0x5d) {
        i++
        return { value: [] }
      }
      stack.push({ array: [] })
      return undefined
    }
    if (c === 0x22) return { value: yield* string() }
    for (const [word, value] of WORDS) {
      if (text.startsWith(word, i)) {
        i += word.length
        return { value }
      }
    }
    NUMBER.lastIndex = i
    const match = NUMBER.exec(text)
    if (!match) throw new Unreadable()
    i += match[0].length
    return { value: Number(match[0]) }
  }

  let done = yield* scalarOrOpen()
  for (;;) {
    if (++built % STEP === 0) yield
    if (done === undefined) {
      done = yield* scalarOrOpen()
      continue
    }
    // A value is complete: put it into its container, then see what follows.
    const top = stack[stack.length - 1]
    if (!top) break
    if (top.array) top.array.push(done.value)
    else setField(top.object, top.key, done.value)
    skipSpace()
    const c = text.charCodeAt(i++)
    if (c === 0x2c /* , */) {
      if (top.object) {
        skipSpace()
        if (text.charCodeAt(i) !== 0x22) throw new Unreadable()
        top.key = yield* string()
        skipSpace()
        if (text.charCodeAt(i++) !== 0x3a) throw new Unreadable()
      }
      done = undefined
    } else if ((c === 0x5d && top.array) || (c === 0x7d && top.object)) {
      stack.pop()
      done = { value: top.array ?? top.object }
    } else {
      throw new Unreadable()
    }
  }
  skipSpace()
  if (i !== n) throw new Unreadable()
  return done.value
}

const WORDS: ReadonlyArray<[string, unknown]> = [
  ['true', true],
  ['false', false],
  ['null', null],
]
