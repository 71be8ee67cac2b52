/**
 * YAML bodies decoded on another thread (the `yamlDecoder` port). The yaml
 * package's lexer and parser allocate about 1.5 KB per character of a
 * body; collecting that garbage stops the serving thread for milliseconds
 * however the work is sliced. A thread with a heap of its own (a worker)
 * decodes the body and hands back JSON text, which crosses as one string;
 * the serving thread reads it with the sliced JSON parser, as a JSON body.
 * The decoder's refusals come back as its words, so a body refused there
 * is answered exactly as on the serving thread.
 */
import { parseJsonWalk } from '../machinery/json-slices.js'
import { decodeYaml, YamlBodyError, YamlNotJsonError, yamlTextAsJson } from './yaml-body.js'
import { MAX_NESTING_DEPTH } from '../machinery/limits.js'
import { runInSlices, TimeSlice } from '../machinery/time-slice.js'
import { simpleYamlWalk } from './yaml-simple.js'
import { internalError, timeout, tooManyRequests } from '../machinery/status-error.js'

/** What a decoder on another thread answers for one body. */
export type YamlJsonAnswer =
  /** The document's value as JSON text, and its duplicate keys in the decoder's words. */
  | { kind: 'json'; json: string; duplicates: string[] }
  /** The body refused: go-yaml's words after `yaml: ` (YamlBodyError's message). */
  | { kind: 'refused'; message: string }
  /** A value JSON text cannot carry (`.inf`, `.nan`): Go's JSON encoder's words (YamlNotJsonError's message). */
  | { kind: 'not-json'; message: string }
  /** No thread to decode on: decoded on the serving thread instead. */
  | { kind: 'here' }
  /** Every place in the decoder's queue taken. */
  | { kind: 'busy' }
  /** The body took the decoder past its deadline; the decoder was stopped. */
  | { kind: 'timeout' }
  /** The decoder failed while decoding it (it ran out of memory, or died). */
  | { kind: 'failed'; reason: string }

export interface YamlDecoder {
  /** Bodies of fewer characters (and no aliases) are decoded on the serving thread: the hop costs more than it saves. */
  readonly offThreadFrom: number
  decodeToJson(text: string, findDuplicates: boolean): Promise<YamlJsonAnswer>
}

/**
 * Large bodies, and bodies with aliases (`*name`) of any size: a few hundred
 * characters of aliases expand to milliseconds of work before the decoder's
 * alias limit refuses them. A `*` elsewhere (in a scalar) only costs the hop.
 */
export function goesOffThread(text: string, decoder: YamlDecoder): boolean {
  return text.length >= decoder.offThreadFrom || text.includes('*')
}

/** The decoder's side: one body to its answer, in one piece (the thread is the decoder's own). */
export async function yamlToJsonAnswer(text: string, findDuplicates: boolean): Promise<YamlJsonAnswer> {
  let decoded: { value: unknown; duplicates: string[] }
  try {
    decoded = await decodeYaml(text, findDuplicates, Infinity)
  } catch (err) {
    if (err instanceof YamlBodyError) return { kind: 'refused', message: err.message }
    // Its words cross instead of the body being decoded again on the serving thread, which a document composed
    // in one piece (anchors and aliases, which go to the worker whatever their size) would hold for seconds.
    if (err instanceof YamlNotJsonError) return { kind: 'not-json', message: err.message }
    return { kind: 'failed', reason: err instanceof Error ? err.message : String(err) }
  }
  let representable = true
  const json = JSON.stringify(decoded.value, (_key, v: unknown) => {
    if (typeof v === 'number' && !Number.isFinite(v)) representable = false
    return v
  }) as string | undefined
  if (!representable || json === undefined) return { kind: 'here' }
  return { kind: 'json', json, duplicates: decoded.duplicates }
}

/** Below this many characters JSON text is read at once: JSON.parse takes well under a slice. */
const SLICED_JSON_FROM = 64 * 1024

async function parseDecoderJson(json: string): Promise<unknown> {
  if (json.length < SLICED_JSON_FROM) return JSON.parse(json)
  const parsed = await runInSlices(parseJsonWalk(json), new TimeSlice())
  return parsed ? parsed.value : JSON.parse(json)
}

/**
 * The serving thread's side: JSON text is read here (it is most of what
 * clients send as YAML, and needs no YAML parser), as are maps of plain keys
 * and values (yaml-simple.ts: a fraction of the worker's time and garbage);
 * other YAML goes to `decoder`.
 * Throws YamlBodyError as decodeYaml does, or a StatusError when the
 * decoder could not answer: 429 when its queue is full, 504 past its
 * deadline (the request timeout's words), 500 when it failed.
 */
export async function decodeYamlOffThread(text: string, findDuplicates: boolean, decoder: YamlDecoder): Promise<{ value: unknown; duplicates: string[] }> {
  const asJson = await yamlTextAsJson(text)
  if (asJson) return { value: asJson.value, duplicates: [] }
  const simple = await runInSlices(simpleYamlWalk(text, MAX_NESTING_DEPTH))
  if (simple) return { value: simple.value, duplicates: [] }
  const answer = await decoder.decodeToJson(text, findDuplicates)
  switch (answer.kind) {
    case 'json':
      return { value: await parseDecoderJson(answer.json), duplicates: answer.duplicates }
    case 'refused':
      throw new YamlBodyError(answer.message)
    case 'not-json':
      throw new YamlNotJsonError(answer.message)
    case 'here':
      return decodeYaml(text, findDuplicates)
    case 'busy':
      throw tooManyRequests('Too many requests, please try again later.', 1)
    case 'timeout':
      throw timeout('request did not complete within requested timeout - context deadline exceeded')
    case 'failed':
      throw internalError(`decoding the YAML body: ${answer.reason}`)
  }
}
