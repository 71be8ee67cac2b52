/**
 * JSON text another server sent (a webhook's reply, an issuer's key set, an
 * extension server's discovery or OpenAPI document) read into data without
 * holding the thread: such a text may be tens of megabytes, and `JSON.parse`
 * of 60 MiB held the thread for 4 s (small objects) to 22 s (nested
 * arrays). Large texts are checked for depth and built in time slices
 * (json-slices.ts), so the requests of others are served meanwhile.
 */
import { parseJsonWalk } from './json-slices.js'
import { jsonDepthMessage, jsonTooDeepAt, jsonTooDeepWalk, MAX_NESTING_DEPTH } from './limits.js'
import { runInSlices, TimeSlice } from './time-slice.js'

/** A text refused for its depth alone (a caller may word that its own way). */
export class JsonTooDeepError extends Error {
  constructor(bracket: string) {
    super(jsonDepthMessage(bracket))
  }
}

/** Below this many characters a text is parsed at once: JSON.parse takes well under a slice. */
const SLICED_FROM = 64 * 1024

/**
 * The data of `text`, or an Error saying why it is not JSON (Go's words when
 * it nests deeper than `maxDepth`, which every later walk over the data
 * would otherwise have to survive).
 */
export async function parseJsonInSlices(text: string, maxDepth = MAX_NESTING_DEPTH): Promise<unknown> {
  if (text.length < SLICED_FROM) {
    const tooDeep = jsonTooDeepAt(text, maxDepth)
    if (tooDeep) throw new JsonTooDeepError(tooDeep)
    return JSON.parse(text) as unknown
  }
  const slice = new TimeSlice()
  const tooDeep = await runInSlices(jsonTooDeepWalk(text, maxDepth), slice)
  if (tooDeep) throw new JsonTooDeepError(tooDeep)
  const parsed = await runInSlices(parseJsonWalk(text), slice)
  // JSON.parse would find the fault only after building all before it, at once: a large text is refused without it.
  if (!parsed) throw new SyntaxError(`the ${text.length} characters are not one JSON value`)
  return parsed.value
}
