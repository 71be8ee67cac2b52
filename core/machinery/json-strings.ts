/**
 * Finding where a JSON string ends in a text of megabytes: a character at a
 * time for the first few dozen (most strings end there, and a search costs
 * more to start), then with the runtime's regular-expression search, which
 * scans a long string many times faster than a loop over charCodeAt.
 */

import type { Checkpointed } from './time-slice.js'

/** Characters read one by one before the search takes over. */
export const QUICK_STRING_RUN = 64

const QUOTE_OR_BACKSLASH = /["\\]/

/**
 * Where the string being read ends: from `from` (inside it, not just after
 * a backslash) up to `stop`, the index of its closing quote; or, when
 * `stop` comes first, `~resumeAt` (a negative number) with `resumeAt` the
 * place to go on from (`stop`, or just past an escape that crosses it).
 */
export function jsonStringEnd(text: string, from: number, stop: number): number {
  let i = from
  const quick = Math.min(stop, from + QUICK_STRING_RUN)
  while (i < quick) {
    const c = text.charCodeAt(i)
    if (c === 0x22 /* " */) return i
    i += c === 0x5c /* \ */ ? 2 : 1
  }
  return i < stop ? searchedStringEnd(text, i, stop) : ~i
}

/** jsonStringEnd past its first characters: kept apart so that the short loop above stays small enough to inline. */
function searchedStringEnd(text: string, from: number, stop: number): number {
  let i = from
  while (i < stop) {
    const found = text.slice(i, stop).search(QUOTE_OR_BACKSLASH)
    if (found < 0) return ~stop
    i += found
    if (text.charCodeAt(i) === 0x22) return i
    i += 2
  }
  return ~i
}

/**
 * jsonStringEnd over a string of any length, for walks with checkpoints:
 * searched up to `checkpoint`, then a window of `run` characters after each
 * checkpoint (a `yield`). The end is the closing quote's index, or at least
 * the text's length for a string that never closes; `checkpoint` is where
 * the walk's next one falls.
 */
export function* jsonStringEndInSteps(text: string, from: number, checkpoint: number, run: number): Checkpointed<{ end: number; checkpoint: number }> {
  for (let at = from; ; ) {
    const end = jsonStringEnd(text, at, Math.min(text.length, checkpoint))
    if (end >= 0) return { end, checkpoint }
    at = ~end
    if (at >= text.length) return { end: at, checkpoint }
    checkpoint = at + run
    yield
  }
}
