/**
 * Headers the filters add to every answer (`Audit-ID`, the two Priority and
 * Fairness UIDs, HSTS, CORS), without a Headers object where the runtime's
 * writer needs none.
 *
 * Under Node, the request adapter replaces the global Response with a light
 * one that keeps the headers it was given as they are and writes a plain
 * record to the socket directly. Reading `headers` makes it build a Headers
 * object (each name and value validated as it is copied, each `set`
 * validated again) that the adapter then turns back into a record: some 4%
 * of a GET's CPU in the daemon, every answer paying it for the three
 * headers the filters add. An answer made here keeps the record it was made
 * with while nothing has read more of it than its status: a filter's header
 * goes into that record, and the adapter reads the record to look for
 * connection headers. The first read of anything else (`headers`, the body,
 * `clone()` ...) ends that: the runtime's object then holds the headers,
 * and later ones are set on it.
 *
 * Where the global Response is the runtime's own (in process, Bun, Deno),
 * which copies its headers when it is made, answers are made as before and
 * headers are set on their Headers.
 *
 * Header names here are in lower case, as a Headers object keeps them, so
 * that a record never holds one header under two spellings.
 */

type Headerless = new (body: Uint8Array | string | null, init: ResponseInit) => Response

/** Answers with a record, made on one base class; `recordOf` and `bodyOf` are undefined for any other Response. */
interface AnswerKind {
  base: Headerless
  make(body: Uint8Array | string | null, status: number, record: Record<string, string>): Response
  recordOf(response: Response): Record<string, string> | undefined
  bodyOf(response: Response): Uint8Array | string | null | undefined
}

/** Members that do not make the light Response copy its record. */
const READ_WITHOUT_COPY = new Set(['constructor', 'status', 'ok'])

const RuntimeResponse = globalThis.Response as unknown as Headerless
let kind: AnswerKind | undefined

/**
 * Answers on `base` whose every member but `status` and `ok` first forgets
 * the record: whatever reads them may make the base copy the record (into
 * a Headers object, or a runtime Response), after which changes to the
 * record would not be written.
 */
function answerKindOn(base: Headerless): AnswerKind {
  class Answer extends base {
    #record: Record<string, string> | undefined
    /** What it was made with, kept for readers that must not make the base copy it (bodyOf). */
    readonly #body: Uint8Array | string | null

    constructor(body: Uint8Array | string | null, status: number, record: Record<string, string>) {
      super(body, { status, headers: record })
      this.#record = record
      this.#body = body
    }

    static recordOf(response: Response): Record<string, string> | undefined {
      return #record in response ? (response as Answer).#record : undefined
    }

    static bodyOf(response: Response): Uint8Array | string | null | undefined {
      return #body in response ? (response as Answer).#body : undefined
    }

    static forget(response: object): void {
      if (#record in response) (response as Answer).#record = undefined
    }
  }
  for (const [name, member] of Object.entries(Object.getOwnPropertyDescriptors(base.prototype))) {
    if (READ_WITHOUT_COPY.has(name)) continue
    if (member.get) {
      const get = member.get
      Object.defineProperty(Answer.prototype, name, {
        configurable: true,
        get(this: object) {
          Answer.forget(this)
          return get.call(this) as unknown
        },
      })
    } else if (typeof member.value === 'function') {
      const method = member.value as (...args: unknown[]) => unknown
      Object.defineProperty(Answer.prototype, name, {
        configurable: true,
        writable: true,
        value(this: object, ...args: unknown[]) {
          Answer.forget(this)
          return method.apply(this, args)
        },
      })
    }
  }
  return {
    base,
    make: (body, status, record) => new Answer(body, status, record),
    recordOf: (response) => Answer.recordOf(response),
    bodyOf: (response) => Answer.bodyOf(response),
  }
}

/**
 * A Response of `body` whose headers (names in lower case; the record is
 * the answer's own from now on) stay that record until something reads
 * more than its status, when the global Response is not the runtime's
 * (Node's adapter's); a Response as any other where it is.
 */
export function answerWithPlainHeaders(body: Uint8Array | string | null, status: number, headers: Record<string, string>): Response {
  const base = globalThis.Response as unknown as Headerless
  if (base === RuntimeResponse) return new base(body, { status, headers })
  if (kind?.base !== base) kind = answerKindOn(base)
  return kind.make(body, status, headers)
}

/** Sets a header (`name` in lower case) on an answer: into its record while it has one, on its Headers otherwise. */
export function setAnswerHeader(response: Response, name: string, value: string): void {
  const record = kind?.recordOf(response)
  if (record) record[name] = value
  else response.headers.set(name, value)
}

/**
 * The headers an answer will be written with, names in lower case, when it
 * still has its record; undefined when they are in its Headers (read those).
 */
export function plainHeadersOf(response: Response): Readonly<Record<string, string>> | undefined {
  return kind?.recordOf(response)
}

/**
 * The body an answer made here was given, read without reading the answer
 * (which would make the light Response copy its record and body into a
 * runtime Response); undefined for any other Response.
 */
export function plainBodyOf(response: Response): Uint8Array | string | null | undefined {
  return kind?.bodyOf(response)
}
