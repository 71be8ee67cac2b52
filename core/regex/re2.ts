/**
 * Regular expressions that come from users (a CRD's `pattern`, CEL's
 * `matches`, `find` and `findAll`) run on re2js, a linear-time engine with
 * RE2's syntax and semantics, as upstream runs them on Go's regexp: a
 * pattern such as `^(a+)+$` costs time proportional to its input instead of
 * backtracking without end, and the syntax errors read as Go's
 * (`error parsing regexp: invalid or unsupported Perl syntax: `(?=``).
 * Lookaround and backreferences do not exist in RE2 and are refused.
 *
 * Compiled patterns are kept in a bounded cache, since the same few
 * patterns are matched against every object of a kind.
 *
 * Linear is not cheap, though: when re2js's DFA gives up it runs an NFA
 * whose work is the compiled program's size times the input's length, and
 * a short pattern can compile large (`(?:a?){1000}a{1000}b` is 3,003
 * instructions). Since the whole server shares one thread, a match whose
 * worst case is over REGEX_WORK_LIMIT is refused before it runs
 * (RegexWorkExceeded), and each caller turns that into its own error.
 *
 * A pattern from a user is matched by stepped-match.ts instead, which
 * counts the work really done: a CRD's `pattern` in slices, the work of all
 * the values of one request bounded together (RegexWorkBudget); CEL's
 * `matches`, which runs inside a synchronous evaluation, at once but
 * within REGEX_AT_ONCE_WORK_LIMIT.
 */
import { RE2JS } from 're2js'
import { estimatedProgramSize } from './program-size.js'
import { type WorkCounter, steppedTest } from './stepped-match.js'
import { type Checkpointed, runAtOnce } from '../machinery/time-slice.js'

/** A pattern RE2 refuses; `message` is Go's regexp.Compile error text. */
export class RegexSyntaxError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'RegexSyntaxError'
  }
}

/**
 * The most work one match may need in the worst case, in program
 * instructions times input characters. re2js's NFA gets through about
 * 3·10^7 of them a second when every instruction stays live, so no match
 * stalls the server much longer than a second and a half. Real patterns
 * stay far below it: hostname and label patterns compile to 20–130
 * instructions, a PEM or base64 pattern to 20–70, an IPv6 one to 700, so a
 * pattern of 30 instructions still matches a value as large as a whole
 * object (1.5 MiB), and one of 700 a value of 70,000 characters.
 */
export const REGEX_WORK_LIMIT = 50_000_000

/** A match refused because its worst case is over REGEX_WORK_LIMIT. */
export class RegexWorkExceeded extends Error {
  constructor(
    readonly instructions: number,
    readonly inputLength: number,
  ) {
    super(`regular expression of ${instructions} instructions is too costly to match against ${inputLength} characters`)
    this.name = 'RegexWorkExceeded'
  }
}

/** How many compiled patterns (and refusals) are remembered. */
export const REGEX_CACHE_SIZE = 1024

/**
 * The largest program a pattern may compile to. Go's regexp allows some
 * 3.3 million instructions, built in milliseconds; re2js builds one in
 * about 2 µs and keeps some 70 bytes of it, so `x{1000}` written a
 * thousand times (7,000 characters) held the thread 2 s and the cache
 * 70 MB, and a few dozen such patterns, a CEL rule matching against a
 * pattern from the object, ran the process out of memory. A program past
 * this cannot be matched against more than 500 characters anyway
 * (REGEX_WORK_LIMIT); it is refused as Go refuses one past its own limit,
 * by an estimate from the pattern's text before compiling (Go's checkSize,
 * see program-size.ts), and by the compiled program's own size.
 */
export const REGEX_PROGRAM_LIMIT = 100_000

/** How many instructions the cached programs may hold in all (some 140 MB at most). */
export const REGEX_CACHE_INSTRUCTIONS = 2_000_000

/** Go's ErrLarge, which names the whole pattern. */
const TOO_LARGE = (pattern: string): string => `error parsing regexp: expression too large: \`${pattern}\``

const cache = new Map<string, RE2JS | RegexSyntaxError>()
let cachedInstructions = 0

const weight = (entry: RE2JS | RegexSyntaxError): number => (entry instanceof RegexSyntaxError ? 0 : entry.programSize())

function compileUncached(pattern: string): RE2JS | RegexSyntaxError {
  if ((estimatedProgramSize(pattern) ?? 0) > REGEX_PROGRAM_LIMIT) return new RegexSyntaxError(TOO_LARGE(pattern))
  try {
    const compiled = RE2JS.compile(pattern)
    return compiled.programSize() > REGEX_PROGRAM_LIMIT ? new RegexSyntaxError(TOO_LARGE(pattern)) : compiled
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err)
    // Go names the pattern after this code; re2js does not.
    if (message.endsWith('expression too large')) return new RegexSyntaxError(TOO_LARGE(pattern))
    return new RegexSyntaxError(message.startsWith('error parsing regexp:') ? message : `error parsing regexp: ${message}`)
  }
}

/** The compiled pattern or the reason RE2 refuses it, from the cache when it has been seen. */
function lookup(pattern: string): RE2JS | RegexSyntaxError {
  const hit = cache.get(pattern)
  if (hit !== undefined) {
    // Map keeps insertion order: moving a hit to the end makes the first key the least recently used.
    cache.delete(pattern)
    cache.set(pattern, hit)
    return hit
  }
  const compiled = compileUncached(pattern)
  cachedInstructions += weight(compiled)
  cache.set(pattern, compiled)
  // The least recently used go first, by number and by the instructions they hold.
  for (const [oldest, entry] of cache) {
    if (cache.size <= REGEX_CACHE_SIZE && cachedInstructions <= REGEX_CACHE_INSTRUCTIONS) break
    if (oldest === pattern) break
    cache.delete(oldest)
    cachedInstructions -= weight(entry)
  }
  return compiled
}

/** Go's error text when `pattern` is not a valid RE2 expression; undefined when it is. */
export function regexError(pattern: string): string | undefined {
  const compiled = lookup(pattern)
  return compiled instanceof RegexSyntaxError ? compiled.message : undefined
}

/** The compiled pattern; throws RegexSyntaxError when RE2 refuses it. Matching with it is not bounded: see regexTest. */
export function compileRegex(pattern: string): RE2JS {
  const compiled = lookup(pattern)
  if (compiled instanceof RegexSyntaxError) throw compiled
  return compiled
}

/** The compiled pattern, once its worst case over `input` is known to be within REGEX_WORK_LIMIT. */
function compileFor(pattern: string, input: string): RE2JS {
  const compiled = compileRegex(pattern)
  const instructions = compiled.programSize()
  if (instructions * input.length > REGEX_WORK_LIMIT) throw new RegexWorkExceeded(instructions, input.length)
  return compiled
}

/**
 * The work all the user-supplied patterns of one request may do together,
 * in threads stepped (stepped-match.ts; some 20,000 a millisecond): as much
 * as one match may need at worst. A list of 60 values of 40,000 characters
 * against a pattern of 300 instructions needs 700 million, 24 s of the
 * thread's time; real objects stay far below (a 3 MB object of base64
 * against a character-class pattern, 30 million).
 */
export const REGEX_REQUEST_WORK_LIMIT = REGEX_WORK_LIMIT

/**
 * The work one match run at once (CEL's `matches`, inside an evaluation
 * that cannot pause) may do: some tens of milliseconds of the thread.
 */
export const REGEX_AT_ONCE_WORK_LIMIT = 1_000_000

/** What is left of a request's REGEX_REQUEST_WORK_LIMIT. */
export class RegexWorkBudget {
  constructor(public remaining = REGEX_REQUEST_WORK_LIMIT) {}
}

/** Charges one match's work to its own bound and to the request's budget, refusing it past either. */
function matchCounter(compiled: RE2JS, input: string, perMatch: number, budget: RegexWorkBudget | undefined): WorkCounter {
  let done = 0
  return {
    charge(units) {
      done += units
      if (budget) budget.remaining -= units
      if (done > perMatch || (budget !== undefined && budget.remaining < 0)) throw new RegexWorkExceeded(compiled.programSize(), input.length)
    },
  }
}

/**
 * Whether a user's `pattern` matches anywhere in `input`, as work with
 * checkpoints: refused (RegexWorkExceeded) when its worst case is over
 * REGEX_WORK_LIMIT, or once the request's budget is spent.
 */
export function* userRegexTestInSteps(pattern: string, input: string, budget: RegexWorkBudget): Checkpointed<boolean> {
  const compiled = compileFor(pattern, input)
  const matched = yield* steppedTest(compiled, input, matchCounter(compiled, input, REGEX_WORK_LIMIT, budget))
  return matched ?? compiled.test(input)
}

/**
 * The request whose synchronous work is running (set by withRegexBudget):
 * the thread runs one at a time between two turns of the event loop.
 */
let runningBudget: RegexWorkBudget | undefined

/** Runs `work` (synchronous) with the matches it makes charged to `budget`. */
export function withRegexBudget<T>(budget: RegexWorkBudget, work: () => T): T {
  const outer = runningBudget
  runningBudget = budget
  try {
    return work()
  } finally {
    runningBudget = outer
  }
}

/**
 * Whether a user's `pattern` matches anywhere in `input`, at once: within
 * REGEX_AT_ONCE_WORK_LIMIT and the running request's budget, if any.
 */
export function userRegexTest(pattern: string, input: string): boolean {
  const compiled = compileFor(pattern, input)
  const matched = runAtOnce(steppedTest(compiled, input, matchCounter(compiled, input, REGEX_AT_ONCE_WORK_LIMIT, runningBudget)))
  return matched ?? compiled.test(input)
}

/** Whether `pattern` matches anywhere in `input` (Go's MatchString: unanchored). For the server's own patterns: see userRegexTest. */
export function regexTest(pattern: string, input: string): boolean {
  return compileFor(pattern, input).test(input)
}

/** The leftmost match in `input`, or '' when there is none (Go's FindString). */
export function regexFind(pattern: string, input: string): string {
  const matcher = compileFor(pattern, input).matcher(input)
  return matcher.find() ? (matcher.group() ?? '') : ''
}

/**
 * How long all the matches of one findAll may take. Each search is bounded
 * (REGEX_WORK_LIMIT), but a search may read to the input's end whatever
 * match it finds (`a.*b|a` over a run of `a`s looks for a `b` every time),
 * so their number times the input's length is the real work: 14 s for
 * 20,000 characters at a CEL cost of 4,000. Upstream's FindAllString does
 * the same work, on the request's own goroutine; here the searches stop
 * past this bound, refused as a single search past its own.
 */
export const FIND_ALL_TIME_LIMIT_MS = 1000

/**
 * Successive non-overlapping matches (Go's FindAllString): at most `limit`
 * of them, every one when `limit` is negative. An empty match right after
 * a previous match is skipped, as Go does.
 */
export function regexFindAll(pattern: string, input: string, limit = -1): string[] {
  const out: string[] = []
  if (limit === 0) return out
  const compiled = compileFor(pattern, input)
  const matcher = compiled.matcher(input)
  const deadline = performance.now() + FIND_ALL_TIME_LIMIT_MS
  let previousEnd = -1
  let from = 0
  while (from <= input.length && matcher.find(from)) {
    if (performance.now() > deadline) throw new RegexWorkExceeded(compiled.programSize(), input.length)
    const start = matcher.start()
    const end = matcher.end()
    if (end === start && start === previousEnd) {
      // Advance past one whole character (a surrogate pair counts as one).
      const code = input.codePointAt(start) ?? 0
      from = start + (code > 0xffff ? 2 : 1)
      continue
    }
    out.push(input.slice(start, end))
    if (limit > 0 && out.length >= limit) break
    previousEnd = end
    from = end > start ? end : end + ((input.codePointAt(end) ?? 0) > 0xffff ? 2 : 1)
  }
  return out
}
