/**
 * The Kubernetes libraries' own estimates of what a call costs
 * (apiserver/pkg/cel/library/cost.go, EstimateCallCost), consulted before
 * cel-go's: keyed by function name, and only where the call has the shape
 * upstream tests for (a target, a number of arguments). cel-go always hands
 * upstream a target (a pointer to a possibly empty one), so global
 * functions such as `ip(s)` and `quantity(s)` are estimated by their
 * argument too. Undefined leaves the call to cel-go's rules. The costs
 * exclude the arguments' own.
 */
import type { CallEstimate } from './calls.js'
import { type CostNode, type Sizes, typeName } from './node.js'
import { COST_UNITS, type Range, add, byFactor, multiply, range, U64_MAX } from './range.js'

const { stringTraversal, regexStringLength, listCreate, structCreate } = COST_UNITS

const fixed = (n: number): CallEstimate => ({ cost: range(n) })

/** What an authorization check costs: enough to allow only two per expression. */
const AUTHORIZER_CHECK = 350_000

/** The longest regular expression behind a named format (upstream's MaxNameFormatRegexSize). */
const MAX_NAME_FORMAT_REGEX_SIZE = 128
/** The longest name of a format (upstream's MaxFormatSize). */
const MAX_FORMAT_SIZE = 64

const AUTHORIZER_ACCESSORS = new Set(['serviceAccount', 'path', 'group', 'resource', 'subresource', 'namespace', 'name', 'allowed', 'reason', 'error', 'errored'])
const LIST_TRAVERSALS = new Set(['isSorted', 'sum', 'max', 'min', 'indexOf', 'lastIndexOf'])
const NOMINAL = new Set([
  'masked', 'prefixLength', 'family', 'isUnspecified', 'isLoopback', 'isLinkLocalMulticast', 'isLinkLocalUnicast', 'isGlobalUnicast',
  'format.named', 'sign', 'asInteger', 'isInteger', 'asApproximateFloat', 'isGreaterThan', 'isLessThan', 'compareTo', 'add', 'sub',
  'getScheme', 'getHostname', 'getHost', 'getPort', 'getEscapedPath', 'getQuery',
])
/** Types whose equality costs one, whatever their size. */
const UNIT_EQUALITY = new Set(['net.IP', 'net.CIDR', 'kubernetes.Quantity', 'Authorizer', 'PathCheck', 'GroupCheck', 'ResourceCheck', 'Decision'])

/** Parsing a label or field selector: the string once, and a list and a struct per requirement (two characters each at least). */
function selectorCost(length: Range): Range {
  const parse = byFactor(length, stringTraversal)
  const requirements = byFactor(byFactor(length, 0.5), listCreate + structCreate)
  return add(add(range(listCreate), parse), requirements)
}

/** Comparing each element once, plus reading it when it is a string or bytes. */
function listTraversal(target: CostNode, sizes: Sizes): CallEstimate {
  const element = sizes.element(target)
  if (!element) return { cost: byFactor(sizes.library(target), stringTraversal) }
  let perElement = range(1)
  const k = typeName(element.type)
  if (k === 'string' || k === 'bytes') perElement = add(perElement, byFactor(sizes.library(element), stringTraversal))
  return { cost: multiply(sizes.library(target), perElement) }
}

/** The size of `s.replace(a, b)`: as many replacements as fit, of the longest (shortest) replacement. */
function replaceEstimate(target: CostNode, args: readonly CostNode[], sizes: Sizes): CallEstimate {
  const sz = sizes.library(target)
  const before = sizes.library(args[0] as CostNode)
  const after = sizes.library(args[1] as CostNode)
  let countMax: number
  let retainedMax = 0
  if (before.min === 0) {
    countMax = sz.max < U64_MAX ? sz.max + 1 : sz.max
    retainedMax = sz.max
  } else if (after.max <= before.min) {
    countMax = 0
    retainedMax = sz.max
  } else {
    countMax = Math.ceil(sz.max / before.min)
  }
  let countMin: number
  let retainedMin = 0
  if (before.max === 0) {
    countMin = sz.min < U64_MAX ? sz.min + 1 : sz.min
    retainedMin = sz.min
  } else if (before.max <= after.min) {
    countMin = 0
    retainedMin = sz.min
  } else {
    countMin = Math.ceil(sz.min / before.max)
  }
  const resultSize = add(multiply(range(countMin, countMax), after), range(retainedMin, retainedMax))
  return { cost: byFactor(sz, 2 * stringTraversal), resultSize }
}

function joinEstimate(target: CostNode, args: readonly CostNode[], sizes: Sizes): CallEstimate {
  const listSize = sizes.library(target)
  const element = sizes.element(target)
  let size = element ? multiply(listSize, sizes.library(element)) : range(0)
  const separator = args[0]
  if (separator) {
    const separators = range(Math.max(0, listSize.min - 1), Math.max(0, listSize.max - 1))
    size = add(size, multiply(sizes.library(separator), separators))
  }
  return { cost: byFactor(size, stringTraversal), resultSize: size }
}

/** Comparing two 4- or 16-byte addresses. */
const IP_COMPARISON = byFactor(add(range(4, 16), range(4, 16)), stringTraversal)

function containsEstimate(fn: string, args: readonly CostNode[], sizes: Sizes): CallEstimate {
  let cost = IP_COMPARISON
  if (fn === 'containsCIDR') cost = add(add(cost, byFactor(range(4, 16), stringTraversal)), range(1))
  const other = args[0] as CostNode
  if (typeName(other.type) === 'string') cost = add(cost, byFactor(sizes.library(other), stringTraversal))
  return { cost }
}

/** Equality of the Kubernetes types, which does not depend on their size; undefined for any other type. */
function equalityEstimate(args: readonly CostNode[]): CallEstimate | undefined {
  const [lhs, rhs] = args
  const name = typeName(lhs?.type)
  if (!name || name !== typeName(rhs?.type)) return undefined
  if (UNIT_EQUALITY.has(name)) return fixed(1)
  if (name === 'kubernetes.NamedFormat') return { cost: byFactor(range(1, MAX_FORMAT_SIZE), stringTraversal) }
  // Upstream reads the right-hand size twice: a URL built by url() carries its string's size.
  if (name === 'net.URL') return { cost: byFactor(range(1, rhs?.computed?.max ?? 1), stringTraversal) }
  return undefined
}

/** The estimate of the Kubernetes libraries for a call of `fn`, or undefined to use cel-go's. */
export function kubernetesCallEstimate(fn: string, target: CostNode | undefined, args: readonly CostNode[], sizes: Sizes): CallEstimate | undefined {
  if (fn === 'check') return fixed(AUTHORIZER_CHECK)
  if (AUTHORIZER_ACCESSORS.has(fn) || NOMINAL.has(fn)) return fixed(1)
  const [first] = args
  switch (fn) {
    case 'fieldSelector':
    case 'labelSelector':
      return args.length === 1 && first ? { cost: selectorCost(sizes.library(first)) } : undefined
    case 'url':
    case 'jsonpatch.escapeKey': {
      if (args.length !== 1 || !first) return undefined
      const sz = sizes.library(first)
      return { cost: byFactor(sz, stringTraversal), resultSize: sz }
    }
    case 'lowerAscii':
    case 'upperAscii':
    case 'substring':
    case 'trim': {
      if (!target) return undefined
      const sz = sizes.library(target)
      return { cost: byFactor(sz, stringTraversal), resultSize: sz }
    }
    case 'replace':
      return target && args.length >= 2 ? replaceEstimate(target, args, sizes) : undefined
    case 'split': {
      if (!target) return undefined
      const sz = sizes.library(target)
      const limit = args[1]?.literal
      const max = typeof limit === 'bigint' ? Math.max(0, Number(limit)) : sz.max
      return { cost: byFactor(sz, 2 * stringTraversal), resultSize: range(0, max) }
    }
    case 'join':
      return target ? joinEstimate(target, args, sizes) : undefined
    case 'find':
    case 'findAll': {
      if (!target || !first) return undefined
      const sz = sizes.library(target)
      const input = byFactor(add(sz, range(1)), stringTraversal)
      const regex = byFactor(sizes.library(first), regexStringLength)
      return { cost: multiply(input, regex), resultSize: range(0, sz.max) }
    }
    case 'cidr':
    case 'isIP':
    case 'isCIDR':
    case 'quantity':
    case 'isQuantity':
      // Parsing is one traversal of the string.
      return first ? { cost: byFactor(sizes.library(first), stringTraversal) } : undefined
    case 'ip':
      // A CIDR's ip() reads a field; ip(s) parses s.
      return target || !first ? fixed(1) : { cost: byFactor(sizes.library(first), stringTraversal) }
    case 'ip.isCanonical':
      // Parsing, then comparing with the original.
      return first ? { cost: byFactor(sizes.library(first), 2 * stringTraversal) } : undefined
    case 'containsIP':
    case 'containsCIDR':
      return target && first ? containsEstimate(fn, args, sizes) : undefined
    case 'validate':
      return target && first
        ? { cost: byFactor(byFactor(sizes.library(first), stringTraversal), MAX_NAME_FORMAT_REGEX_SIZE * regexStringLength) }
        : undefined
    case '_==_':
      return args.length === 2 ? equalityEstimate(args) : undefined
  }
  if (LIST_TRAVERSALS.has(fn) && target) return listTraversal(target, sizes)
  return undefined
}
