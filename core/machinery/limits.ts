/**
 * The bounds that keep one request's work proportional to its body, and the
 * checks that enforce them before anything deeper runs. The body limit itself
 * (413 past `--max-request-body-bytes`, 3 MiB) is enforced by the body reader.
 */
import { StatusError, type StatusReason } from './status-error.js'
import { jsonStringEnd, jsonStringEndInSteps } from './json-strings.js'
import { type Checkpointed, runAtOnce } from './time-slice.js'

/**
 * How deeply arrays and objects may nest in a decoded body or a patched
 * object. Upstream's decoders allow 10000 levels (Go's growable stacks);
 * here every walk over an object (validation, pruning, merge, YAML output,
 * V8's own JSON.stringify and structuredClone) recurses on a fixed stack
 * that overflows between 800 and 3000 levels, so the bound is lower. Real
 * objects stay far below it: the deepest published CRD schemas nest ~60 levels.
 */
export const MAX_NESTING_DEPTH = 500

/** Upstream's maxJSONPatchOperations: the operations one JSON patch may hold. */
export const MAX_JSON_PATCH_OPERATIONS = 10000

/**
 * Upstream's JSONPatchMaxCopyBytes: how much a JSON patch's `copy`
 * operations may add in total, which would otherwise double the object per
 * operation (10000 operations in a few kilobytes).
 */
export const JSON_PATCH_MAX_COPY_BYTES = 3 * 1024 * 1024

/**
 * The first bracket of a JSON text that opens one level more than `limit`,
 * or undefined. Strings are skipped, so brackets inside them do not count;
 * the text need not be valid JSON (the parser reports that afterwards).
 */
export function jsonTooDeepAt(text: string, limit = MAX_NESTING_DEPTH): string | undefined {
  return runAtOnce(jsonTooDeepWalk(text, limit))
}

/** The same scan with checkpoints every 64 Ki characters, for bodies of megabytes (runInSlices). */
export function* jsonTooDeepWalk(text: string, limit = MAX_NESTING_DEPTH): Checkpointed<string | undefined> {
  let depth = 0
  let checkpoint = 1 << 16
  for (let i = 0; i < text.length; i++) {
    if (i >= checkpoint) {
      checkpoint = i + (1 << 16)
      yield
    }
    const c = text.charCodeAt(i)
    if (c === 0x22 /* " */) {
      // Skip the string, escapes included; most end at once, a long one with checkpoints (it may be megabytes long).
      const end = jsonStringEnd(text, i + 1, Math.min(text.length, checkpoint))
      if (end >= 0) i = end
      else ({ end: i, checkpoint } = yield* jsonStringEndInSteps(text, ~end, checkpoint, 1 << 16))
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > limit) return text[i]
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth--
    }
  }
  return undefined
}

/**
 * The depth check of jsonTooDeepWalk over the bytes of a UTF-8 body as they
 * arrive, a chunk at a time: the quotes, backslashes and brackets it counts
 * are ASCII, and no byte of a multi-byte character is. A body nested too
 * deeply is refused from its first chunks, before the rest is read.
 */
export class JsonDepthScanner {
  private depth = 0
  private inString = false
  /** The chunk before ended on a backslash inside a string: the next byte is escaped. */
  private escaping = false

  constructor(private readonly limit = MAX_NESTING_DEPTH) {}

  /** The first bracket of `bytes` that opens one level more than the limit, or undefined. */
  feed(bytes: Uint8Array): string | undefined {
    let i = 0
    while (i < bytes.length) {
      if (this.inString) {
        if (this.escaping) {
          this.escaping = false
          i++
          continue
        }
        i = this.skipString(bytes, i)
        continue
      }
      const b = bytes[i++]!
      if (b === 0x22 /* " */) this.inString = true
      else if (b === 0x7b /* { */ || b === 0x5b /* [ */) {
        if (++this.depth > this.limit) return String.fromCharCode(b)
      } else if (b === 0x7d /* } */ || b === 0x5d /* ] */) this.depth--
    }
    return undefined
  }

  /** From `from` inside a string to just past its closing quote, or to the chunk's end; the native search finds each quote. */
  private skipString(bytes: Uint8Array, from: number): number {
    for (let at = from; ; ) {
      const quote = bytes.indexOf(0x22, at)
      const end = quote < 0 ? bytes.length : quote
      // An odd run of backslashes before the quote (or the chunk's end) escapes what follows it.
      let run = 0
      while (end - run - 1 >= from && bytes[end - run - 1] === 0x5c) run++
      if (quote < 0) {
        this.escaping = run % 2 === 1
        return bytes.length
      }
      if (run % 2 === 0) {
        this.inString = false
        return quote + 1
      }
      at = quote + 1
    }
  }
}

/**
 * Go's JSON scanner's words for a text nested too deeply (`invalid character
 * '[' exceeded max depth`), which upstream puts after its decoder's prefix.
 */
export function jsonDepthMessage(bracket: string): string {
  return `invalid character '${bracket}' exceeded max depth`
}

/** The words of upstream's YAML and unstructured decoders for the same. */
export function depthMessage(limit = MAX_NESTING_DEPTH): string {
  return `exceeded max depth of ${limit}`
}

/**
 * True when `value` nests arrays and objects more than `limit` levels deep.
 * Iterative, so that the check itself cannot overflow the stack it protects.
 */
export function nestsDeeperThan(value: unknown, limit = MAX_NESTING_DEPTH): boolean {
  return runAtOnce(depthWalk(value, limit))
}

/** The same check with checkpoints, for values of megabytes (runInSlices). */
export function* depthWalk(value: unknown, limit = MAX_NESTING_DEPTH): Checkpointed<boolean> {
  // Two stacks side by side and keys read by index: no pair or array of values per node, for values of a million nodes.
  const nodes: unknown[] = [value]
  const depths: number[] = [0]
  for (let visited = 1; nodes.length > 0; visited++) {
    const node = nodes.pop()
    const depth = depths.pop()!
    if (node === null || typeof node !== 'object') continue
    if (depth + 1 > limit) return true
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const child: unknown = node[i]
        if (child !== null && typeof child === 'object') {
          nodes.push(child)
          depths.push(depth + 1)
        }
      }
    } else {
      const object = node as Record<string, unknown>
      const keys = Object.keys(object)
      for (let i = 0; i < keys.length; i++) {
        const child = object[keys[i]!]
        if (child !== null && typeof child === 'object') {
          nodes.push(child)
          depths.push(depth + 1)
        }
      }
    }
    if ((visited & 1023) === 0) yield
  }
  return false
}

/** True for the error a runtime throws when recursion overflows its stack. */
export function isStackOverflow(err: unknown): boolean {
  return err instanceof RangeError && /call stack/i.test(err.message)
}

/**
 * Go's http.DefaultMaxHeaderBytes, which kube-apiserver's listener keeps:
 * how many bytes the request line and the headers of one request may take
 * together. It is what bounds a label or field selector in a URL. The Node
 * daemon's listener refuses far less first (16 KiB over HTTP/1.1, 64 KiB of
 * HTTP/2 header list); this bound is for callers of `fetch` in process.
 */
export const MAX_HEADER_BYTES = 1 << 20

/** The request line and headers as they would go over HTTP/1.1, counted in UTF-16 units (a lower bound on bytes). */
export function headerBytes(request: Request): number {
  const url = request.url
  const pathStart = url.indexOf('/', url.indexOf('//') + 2)
  let bytes = request.method.length + (pathStart < 0 ? 1 : url.length - pathStart) + ' HTTP/1.1\r\n'.length + 2
  request.headers.forEach((value, name) => {
    bytes += name.length + value.length + 4
  })
  return bytes
}

/**
 * Go's server answers 431 before any handler; here the answer is a Status saying the same, so every refusal reads alike.
 * A request through a listener that refuses less than `limit` itself (`listenerLimit`) is not counted again:
 * counting reads every header, which a runtime's Headers may have to be built for.
 */
export function headerTooLarge(request: Request, listenerLimit = Infinity, limit = MAX_HEADER_BYTES): StatusError | undefined {
  if (listenerLimit <= limit) return undefined
  const bytes = headerBytes(request)
  if (bytes <= limit) return undefined
  // No reason: upstream has no StatusReason for 431, Go's server writes the code's text alone.
  return new StatusError(431, '' as StatusReason, `Request Header Fields Too Large: the request line and headers take ${bytes} bytes, more than ${limit}`)
}
