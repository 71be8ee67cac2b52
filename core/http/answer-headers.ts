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
 */

/** The record each such answer was made with, while it is still what the answer will write. */
const records = new WeakMap<object, Record<string, string>>()

/** Members that do not make the light Response copy its record. */
const READ_WITHOUT_COPY = new Set(['constructor', 'status', 'ok'])

type ResponseClass = new (body: Uint8Array | string | null, init: ResponseInit) => Response

const RuntimeResponse = globalThis.Response
let made: { base: ResponseClass; answer: ResponseClass } | undefined

/**
 * A subclass of `base` whose every member but `status` and `ok` first
 * forgets the answer's record: whatever read it may have made the base
 * copy the record (into a Headers object, or a runtime Response), after
 * which changes to the record would not be written.
 */
function answerClassOf(base: ResponseClass): ResponseClass {
  if (made?.base === base) return made.answer
  const answer = class extends base {} as ResponseClass
  for (const [name, member] of Object.entries(Object.getOwnPropertyDescriptors(base.prototype))) {
    if (READ_WITHOUT_COPY.has(name)) continue
    if (member.get) {
      const get = member.get
      Object.defineProperty(answer.prototype, name, {
        configurable: true,
        get(this: object) {
          records.delete(this)
          return get.call(this) as unknown
        },
      })
    } else if (typeof member.value === 'function') {
      const method = member.value as (...args: unknown[]) => unknown
      Object.defineProperty(answer.prototype, name, {
        configurable: true,
        writable: true,
        value(this: object, ...args: unknown[]) {
          records.delete(this)
          return method.apply(this, args)
        },
      })
    }
  }
  made = { base, answer }
  return answer
}

/**
 * A Response of `body` whose headers stay a plain record (names in lower
 * case) until something reads more than its status, when the global
 * Response is not the runtime's (Node's adapter's); a Response as any
 * other where it is.
 */
export function answerWithPlainHeaders(body: Uint8Array | string | null, status: number, headers: Record<string, string>): Response {
  const Base = globalThis.Response as unknown as ResponseClass
  if (Base === (RuntimeResponse as unknown as ResponseClass)) return new Base(body, { status, headers })
  const record: Record<string, string> = {}
  for (const name in headers) record[name.toLowerCase()] = headers[name] as string
  const response = new (answerClassOf(Base))(body, { status, headers: record })
  records.set(response, record)
  return response
}

/** Sets a header on an answer: into its record while it has one, on its Headers otherwise. */
export function setAnswerHeader(response: Response, name: string, value: string): void {
  const record = records.get(response)
  if (record) record[name.toLowerCase()] = value
  else response.headers.set(name, value)
}

/**
 * The headers an answer will be written with, names in lower case, when it
 * still has its record; undefined when they are in its Headers (read those).
 */
export function plainHeadersOf(response: Response): Readonly<Record<string, string>> | undefined {
  return records.get(response)
}
