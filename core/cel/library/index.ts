/**
 * Kubernetes' base CEL environment (apiserver/pkg/cel/environment/base.go):
 * cel-go's standard library with optional types, plus the libraries each
 * Kubernetes minor version added, up to the version the server reports.
 * Every use site (CRD rules, admission policies and match conditions,
 * authentication and authorization config) starts from it and adds its
 * own variables.
 *
 * Not here: the semver library (Kubernetes 1.33) and the image library
 * (1.33); the authorizer library is declared where it is allowed
 * (admission expressions).
 */
import { Environment } from '@marcbachmann/cel-js'
import { DEFAULT_VERSION } from '../../api/version.js'
import { registerComprehensions } from './comprehensions.js'
import { registerFormats } from './format.js'
import { registerLists } from './lists.js'
import { registerNetwork } from './network.js'
import { registerQuantity } from './quantity.js'
import { registerRegex } from './regex.js'
import { registerSets } from './sets.js'
import { registerStrings } from './strings.js'
import { registerURLs } from './urls.js'
import { chargeError } from '../meter.js'

/** The Kubernetes minor version whose CEL environment is offered: the one `/version` reports by default. */
export const CEL_ENVIRONMENT_MINOR = Number(/^v\d+\.(\d+)\./.exec(DEFAULT_VERSION)?.[1] ?? '0')

/** What cel-go's standard library has and this one lacks. */
function registerStandardGaps(env: Environment): Environment {
  return (
    env
      .registerFunction('int(google.protobuf.Timestamp): int', (t: Date) => BigInt(Math.floor(t.getTime() / 1000)))
      .registerFunction('int(uint): int', (u: { valueOf(): bigint }) => {
        const value = BigInt(u.valueOf())
        if (value > 2n ** 63n - 1n) throw new Error('integer overflow')
        return value
      })
      // A duration's nanoseconds.
      .registerFunction('int(google.protobuf.Duration): int', (d: { seconds: bigint; nanos: number }) => d.seconds * 1_000_000_000n + BigInt(d.nanos))
      // cel-go type-checks comparing an optional with null, and an optional never equals a non-optional
      // (the Gateway API writes `format.dns1123Label().validate(self) == null`). Registers != and the mirror too.
      .registerOperator('optional == null', () => false)
  )
}

/** Each library with the minor version that brought it into the base environment. */
const LIBRARIES: readonly { since: number; register: (env: Environment) => Environment }[] = [
  { since: 0, register: registerStandardGaps },
  { since: 0, register: registerURLs },
  { since: 0, register: registerRegex },
  { since: 0, register: registerLists },
  { since: 0, register: registerStrings },
  { since: 28, register: registerQuantity },
  { since: 29, register: registerSets },
  { since: 30, register: registerNetwork },
  { since: 31, register: registerFormats },
  { since: 32, register: registerComprehensions },
]

let built: Environment | undefined

/**
 * The library quotes, in every error it throws at a node, the expression's
 * line with a marker under the node, found by scanning the expression from
 * its start: an error absorbed in a loop (`l.all(x, 1/0 > 0)`) paid that
 * scan for every element, 300 µs each deep in a long rule, a minute within
 * the per-call limit. This server words errors from the library's summary
 * and range alone (checked.ts, evaluate.ts), never its quote, so the
 * library's nodes give no text to quote; the library asks for it once for
 * each error it builds, which is where the running evaluation is charged
 * for the error (meter.ts).
 */
function unquotedErrors(env: Environment): void {
  const node = Object.getPrototypeOf(env.parse('0').ast) as object
  Object.defineProperty(node, 'input', {
    get: () => {
      chargeError()
      return undefined
    },
    configurable: true,
  })
}

/**
 * The base environment, built once and shared: callers get a clone to add
 * their variables and types to (the shared one is frozen by cloning).
 * Aggregate literals are checked as cel-go checks them by checked.ts, not
 * by the library, whose check refuses `dyn` beside another type.
 */
export function kubernetesEnvironment(): Environment {
  if (!built) {
    built = new Environment({ enableOptionalTypes: true, homogeneousAggregateLiterals: false })
    for (const library of LIBRARIES) if (library.since <= CEL_ENVIRONMENT_MINOR) library.register(built)
    unquotedErrors(built)
  }
  return built.clone()
}
