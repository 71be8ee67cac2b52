/**
 * What an operator or a function call costs, from its arguments' actual
 * sizes, priced before the call runs: cel-go's runtime costs
 * (interpreter/runtimecost.go) and Kubernetes' library costs
 * (apiserver/pkg/cel/library/cost.go, CallCost), with one difference where
 * this library does more work than cel-go: concatenating lists copies them
 * here (cel-go links them in O(1)), so each element copied costs one, and
 * a replace is also charged for what its result grows by. That is what
 * bounds memory: a value can only grow by what its charge permits, one
 * element or ten characters per unit of cost.
 */

import { compileRegex } from '../regex/re2.js'

/** One unit of cost per ten characters or elements traversed (cel-go's StringTraversalCostFactor). */
const TRAVERSAL = 0.1
/** cel-go's RegexStringLengthCostFactor. */
const REGEX = 0.25
/**
 * Digits from which a quantity's number is priced for its conversion as
 * well as its traversal: this runtime's big integers are read from decimal
 * text in time that grows with the square of its length (0.9 s for three
 * million digits), where upstream's parser does the same work off the
 * request's thread. Quantities of real objects stay far below.
 */
const BIG_NUMBER_FROM = 4096
/** One unit per this many digit pairs: a call at the per-call limit converts in about a millisecond. */
const DIGIT_PAIRS_PER_UNIT = 10_000
/**
 * How many of a quantity's characters become its number: the whole part
 * and the fraction's first digits (one past the nano, and as many as a
 * binary suffix's power of two needs; further digits are only scanned).
 */
function convertedDigits(text: string): number {
  const point = text.indexOf('.')
  return point < 0 ? text.length : Math.min(text.length, point + 1 + 9 + 64)
}

/**
 * Characters times program instructions per unit of cost that `find` and
 * `findAll` pay at least. Upstream prices a match by the pattern's text,
 * but a short pattern can compile to a thousand instructions (`a{1000}`),
 * and a search for a match's place runs re2js's backtracker or NFA, whose
 * work is the program's size times the input's length: a 170-character
 * string searched 10,000 times within the per-call limit held the thread
 * 31 s. At this price a call at the limit does at most twenty million
 * steps (some 250 to 350 ms); a pattern whose program is half its text or
 * less, as most are (`[a-z0-9]` is one instruction), pays upstream's price,
 * one other twice it at most. `matches` runs on re2js's DFA, which keeps
 * its states between calls, and pays upstream's price alone.
 */
const SEARCH_STEPS_PER_UNIT = 20

/** What a search of `pattern` in `text` costs at least, from the compiled program's size; 0 for a pattern RE2 refuses (the call fails). */
function searchCost(text: unknown, pattern: unknown): number {
  if (typeof text !== 'string' || typeof pattern !== 'string') return 0
  try {
    return Math.ceil((compileRegex(pattern).programSize() * (text.length + 1)) / SEARCH_STEPS_PER_UNIT)
  } catch {
    return 0
  }
}

/**
 * What `format` costs for each value it formats, beyond upstream's price of
 * its characters: a template of a thousand verbs over a thousand integers,
 * formatted a thousand times at upstream's price, held the thread a third
 * of a second (ten times the pace of other work at the per-call limit).
 */
const FORMATTED_VALUE = 3

/** Upstream's fixed price of an authorization check, which allows two per expression. */
const AUTHORIZER_CHECK = 350_000

export type Priced = number

const traversal = (n: number): number => Math.ceil(n * TRAVERSAL)

/** The size cel-go's Sizer reports: characters of a string, bytes, elements of a list or map; 1 for anything else. */
function size(value: unknown): number {
  if (typeof value === 'string' || value instanceof Uint8Array || Array.isArray(value)) return value.length
  if (value instanceof Map || value instanceof Set) return value.size
  return 1
}

const isAggregate = (v: unknown): v is object =>
  typeof v === 'object' && v !== null && !(v instanceof Uint8Array) && !(v instanceof Date) && (Array.isArray(v) || v instanceof Map || v instanceof Set || Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null)

/**
 * How many values (and, with `chars`, characters) a walk through `value`
 * visits, counting shared parts each time they are reached, as an
 * equality test or a formatting does; stops once past `cap`, so pricing a
 * value built by sharing one part many times costs no more than the
 * evaluation may still spend.
 */
export function deepCount(value: unknown, cap: number, chars = false): number {
  let count = 0
  const pending: unknown[] = [value]
  while (pending.length > 0 && count <= cap) {
    const v = pending.pop()
    count++
    if (chars && typeof v === 'string') count += v.length
    else if (!isAggregate(v)) continue
    else if (Array.isArray(v)) {
      // Scalars are counted where they stand, only aggregates wait their turn: a list of
      // strings compared with itself was walked slower than the comparison it priced.
      for (let i = 0; i < v.length && count <= cap; i++) {
        const item: unknown = v[i]
        if (typeof item === 'object' && item !== null) pending.push(item)
        else count += chars && typeof item === 'string' ? 1 + item.length : 1
      }
    }
    else if (v instanceof Map) for (const [k, item] of v) pending.push(k, item)
    else if (v instanceof Set) for (const item of v) pending.push(item)
    else for (const [k, item] of Object.entries(v)) pending.push(k, item)
  }
  return count
}

/** The cap under which a walk's count still fits in what may be charged: ten per unit of cost left, and one more. */
const capFor = (remaining: number): number => Math.min(Number.MAX_SAFE_INTEGER, remaining / TRAVERSAL + 1)

/** `+`, `==`, `!=`, `<`, `<=`, `>`, `>=` and `in` over their operands. */
export function binaryCost(op: string, left: unknown, right: unknown, remaining: number): Priced {
  switch (op) {
    case '+':
      // Strings, bytes and lists are copied into the result: their length is the price (lists: see above).
      if (Array.isArray(left)) return Math.max(1, left.length + size(right))
      if (typeof left === 'string' || left instanceof Uint8Array) return traversal(size(left) + size(right))
      return 1
    case '==':
    case '!=':
      if (isAggregate(left) && isAggregate(right)) {
        const cap = capFor(remaining)
        return traversal(Math.min(deepCount(left, cap), deepCount(right, cap)))
      }
      return typeof left === 'string' || left instanceof Uint8Array ? Math.max(1, traversal(Math.min(size(left), size(right)))) : 1
    case 'in':
      if (Array.isArray(right)) return isAggregate(left) ? traversal(deepCount(right, capFor(remaining))) : Math.max(1, right.length)
      return 1
    default:
      return typeof left === 'string' || left instanceof Uint8Array ? Math.max(1, traversal(Math.min(size(left), size(right)))) : 1
  }
}

/** What `s.replace(from, to[, n])` produces, in characters, counted without building it. */
function replacedLength(text: string, from: string, to: string, limit: bigint): number {
  if (from === '') {
    const slots = [...text].length + 1
    const n = limit < 0n || limit > BigInt(slots) ? slots : Number(limit)
    return text.length + n * to.length
  }
  let matches = 0
  for (let at = text.indexOf(from); at >= 0 && (limit < 0n || matches < limit); at = text.indexOf(from, at + from.length)) matches++
  return text.length + matches * (to.length - from.length)
}

/** A list function's traversal: one per element, and the characters of string elements (cost.go's traversalCost). */
function listTraversal(list: readonly unknown[]): number {
  let cost = 0
  for (const item of list) cost += 1 + (typeof item === 'string' ? traversal(item.length) : 0)
  return cost
}

/** Functions that cost 1 whatever their arguments: accessors, conversions of fixed-size values, size(). */
const NOMINAL = new Set([
  'size', 'int', 'uint', 'double', 'bool', 'dyn', 'type', 'hasValue', 'value', 'orValue', 'or', 'of', 'none',
  'getDate', 'getDayOfMonth', 'getDayOfWeek', 'getDayOfYear', 'getFullYear', 'getHours', 'getMilliseconds',
  'getMinutes', 'getMonth', 'getSeconds', 'serviceAccount', 'path', 'group', 'resource', 'subresource', 'namespace',
  'name', 'allowed', 'reason', 'error', 'errored', 'fieldSelector', 'labelSelector', 'sign', 'asInteger', 'isInteger',
  'asApproximateFloat', 'isGreaterThan', 'isLessThan', 'compareTo', 'add', 'sub', 'masked', 'prefixLength', 'family',
  'isUnspecified', 'isLoopback', 'isLinkLocalMulticast', 'isLinkLocalUnicast', 'isGlobalUnicast', 'named',
])

/**
 * The price of calling `name` with `args` (a method's receiver first).
 * A function not priced here costs what traversing its string and bytes
 * arguments costs (at least 1), so no function walks a long string for free.
 */
export function callCost(name: string, args: readonly unknown[], remaining: number): Priced {
  const [first, second, third, fourth] = args
  switch (name) {
    case 'check':
      return AUTHORIZER_CHECK
    case 'matches':
      return traversal(1 + size(first)) * Math.ceil(size(second) * REGEX)
    case 'find':
    case 'findAll':
      return Math.max(traversal(1 + size(first)) * Math.ceil(size(second) * REGEX), searchCost(first, second))
    case 'contains':
      if (Array.isArray(second) && Array.isArray(third)) return Math.max(1, second.length * third.length)
      return Math.max(1, traversal(size(first)) * traversal(size(second)))
    case 'equivalent':
    case 'intersects':
      return Math.max(1, size(second) * size(third))
    case 'replace': {
      if (typeof first !== 'string' || typeof second !== 'string' || typeof third !== 'string') return 1
      const grown = replacedLength(first, second, third, typeof fourth === 'bigint' ? fourth : -1n) - first.length
      return traversal(2 * first.length) + traversal(Math.max(0, grown))
    }
    case 'quantity':
    case 'isQuantity': {
      const n = typeof first === 'string' ? convertedDigits(first) : 0
      return Math.max(1, traversal(size(first)) + (n < BIG_NUMBER_FROM ? 0 : Math.ceil((n * n) / DIGIT_PAIRS_PER_UNIT)))
    }
    case 'split':
      return traversal(2 * size(first))
    case 'join': {
      if (!Array.isArray(first)) return 1
      let length = typeof second === 'string' ? second.length * Math.max(0, first.length - 1) : 0
      for (const item of first) length += size(item)
      return traversal(2 * length)
    }
    case 'format': {
      // Each value formatted takes some 0.3 µs here, three units' worth at the pace of other work: it costs that beside its characters.
      const cap = capFor(remaining)
      return Math.max(1, traversal(size(first) + deepCount(second, cap, true)) + FORMATTED_VALUE * Math.min(deepCount(second, cap), remaining + 1))
    }
    case 'isSorted':
    case 'sum':
    case 'max':
    case 'min':
    case 'indexOf':
    case 'lastIndexOf':
      if (Array.isArray(first)) {
        const found = isAggregate(second) ? traversal(deepCount(first, capFor(remaining))) : 0
        return listTraversal(first) + found
      }
      return traversal(size(first))
    default: {
      if (NOMINAL.has(name)) return 1
      let cost = 0
      for (const arg of args) if (typeof arg === 'string' || arg instanceof Uint8Array) cost += traversal(arg.length)
      return Math.max(1, cost)
    }
  }
}

export type Pricer = (args: readonly unknown[], remaining: number) => Priced

const nominal: Pricer = () => 1

/**
 * Functions upstream prices at 1 that read a string argument whole here:
 * `size` counts its characters one by one (14 ms a megabyte), the
 * conversions parse it. Called on a long string in a loop, a rule of small
 * cost held the thread for minutes; from LONG_STRING characters on, such a
 * call costs the string's traversal.
 */
const READS_STRING = new Set(['size', 'int', 'uint', 'double', 'bool'])
const LONG_STRING = 4096

const readsString: Pricer = (args) => {
  let cost = 0
  for (const arg of args) if (typeof arg === 'string' && arg.length >= LONG_STRING) cost += traversal(arg.length)
  return Math.max(1, cost)
}

/**
 * A timestamp's fields in a time zone (`t.getHours('Europe/Paris')`):
 * upstream prices them at 1, but the library formats the timestamp in the
 * zone through a formatter it builds for every call, some 70 µs (a zone it
 * does not know, `'+05:30'`, throws after as long), where a unit of cost
 * otherwise takes a tenth of a microsecond: at 1, a loop of them at the
 * per-call limit held the thread 10 s. At this price it takes about as long
 * as any evaluation at the limit; a rule meets the limit past some 1,400
 * such calls. Without a zone they cost 1, as upstream.
 */
const IN_ZONE = new Set(['getDate', 'getDayOfMonth', 'getDayOfWeek', 'getDayOfYear', 'getFullYear', 'getHours', 'getMilliseconds', 'getMinutes', 'getMonth', 'getSeconds'])
const ZONE_COST = 700

const inZone: Pricer = (args) => (args.length === 2 && typeof args[1] === 'string' ? ZONE_COST : 1)

/** The pricing of calls to `name`, chosen once per call site: most functions cost a fixed 1 and need no look at their arguments. */
export function callPricer(name: string): Pricer {
  if (IN_ZONE.has(name)) return inZone
  if (READS_STRING.has(name)) return readsString
  if (NOMINAL.has(name)) return nominal
  return (args, remaining) => callCost(name, args, remaining)
}
