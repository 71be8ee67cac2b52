/**
 * argv -> typed flag values, by upstream's pflag rules: `--flag=value` and
 * `--flag value`; booleans and `--version` take a value only after `=`;
 * shorthands (`-h`, `-v 2`, `-v=2`, `-v2`); `_` and `-` are the same in
 * names; a repeated flag replaces its value, or adds to it for lists; no
 * positional arguments. Every bad input names the flag and the reason.
 */
import { KINDS, type ValueKind } from './kinds.js'
import type { FlagSpec } from './spec.js'
import { defaultValues, FLAGS, type FlagName, type FlagValues } from './table.js'
import { parseBool } from './values.js'
import { appendAll } from '../../machinery/append-all.js'

/** A bad command line; the message is what the user sees after `Error: `. */
export class FlagError extends Error {
  /** Every problem found; one for a parse error, all of them for the rules. */
  readonly problems: readonly string[]

  constructor(problems: string | readonly string[]) {
    const list = typeof problems === 'string' ? [problems] : problems
    super(list.join('\n'))
    this.name = 'FlagError'
    this.problems = list
  }
}

export interface ParsedFlags {
  values: FlagValues
  /** The flags the user gave, by canonical name, in the order first given. */
  set: ReadonlySet<FlagName>
  /** How the user spelled each flag given (`etcd-servers` for `kvstore-servers`), without `--`. */
  spelled: ReadonlyMap<FlagName, string>
}

export type CommandLine =
  | { action: 'help' }
  | { action: 'version'; raw: boolean; version: string }
  | { action: 'run'; flags: ParsedFlags }

/** upstream's WordSepNormalizeFunc: `--secure_port` is `--secure-port`. */
const normalize = (name: string): string => name.replaceAll('_', '-')

const BY_NAME = new Map<string, FlagSpec>()
for (const f of FLAGS) for (const n of [f.name, ...(f.aliases ?? [])]) BY_NAME.set(normalize(n), f)
const BY_SHORT = new Map<string, FlagSpec>(FLAGS.flatMap((f) => (f.short ? [[f.short, f] as const] : [])))

interface Use {
  spec: FlagSpec
  /** As pflag names it in messages: `--name`, or `-v, --v` for a flag with a shorthand. */
  label: string
  spelled: string
  text: string
}

function labelOf(spec: FlagSpec, spelled: string): string {
  return spec.short ? `-${spec.short}, --${spelled}` : `--${spelled}`
}

function kindOf(spec: FlagSpec): ValueKind<unknown> {
  return KINDS[spec.kind] as ValueKind<unknown>
}

/** Splits argv into flag uses, in order; values stay text. */
function tokenize(argv: readonly string[]): Use[] {
  const uses: Use[] = []
  const positional: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? ''
    if (arg === '--') {
      appendAll(positional, argv.slice(i + 1))
      break
    }
    if (!arg.startsWith('-') || arg === '-') {
      positional.push(arg)
      continue
    }
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=')
      const typed = eq < 0 ? arg.slice(2) : arg.slice(2, eq)
      const spelled = normalize(typed)
      const spec = BY_NAME.get(spelled)
      if (!spec) throw new FlagError(`unknown flag: --${typed}`)
      const implied = kindOf(spec).implied
      let text: string
      if (eq >= 0) text = arg.slice(eq + 1)
      else if (implied !== undefined) text = implied
      else if (i + 1 < argv.length) text = argv[++i] ?? ''
      else throw new FlagError(`flag needs an argument: ${arg}`)
      uses.push({ spec, label: labelOf(spec, spelled), spelled, text })
      continue
    }
    // Shorthands: `-hv2` is -h then -v 2; a shorthand that takes a value eats the rest, or the next argument.
    let rest = arg.slice(1)
    while (rest !== '') {
      const letter = rest[0] ?? ''
      const spec = BY_SHORT.get(letter)
      if (!spec) throw new FlagError(`unknown shorthand flag: '${letter}' in ${arg}`)
      const implied = kindOf(spec).implied
      let text: string
      if (rest[1] === '=') {
        text = rest.slice(2)
        rest = ''
      } else if (implied !== undefined) {
        text = implied
        rest = rest.slice(1)
      } else if (rest.length > 1) {
        text = rest.slice(1)
        rest = ''
      } else if (i + 1 < argv.length) {
        text = argv[++i] ?? ''
        rest = ''
      } else {
        throw new FlagError(`flag needs an argument: '${letter}' in ${arg}`)
      }
      uses.push({ spec, label: labelOf(spec, spec.name), spelled: spec.name, text })
    }
  }
  const extra = positional.filter((p) => p !== '')
  if (extra.length) throw new FlagError(`"apiserver" does not take any arguments, got ${JSON.stringify(extra)}`)
  return uses
}

function invalidArgument(use: Use, reason: string): FlagError {
  return new FlagError(`invalid argument ${JSON.stringify(use.text)} for "${use.label}" flag: ${reason}`)
}

/** What `--version` asks for: print the version (plain or raw), set the reported version, or nothing. */
function versionRequest(use: Use): { print: 'text' | 'raw' } | { report: string } | undefined {
  if (use.text === 'raw') return { print: 'raw' }
  if (use.text.startsWith('v')) {
    if (!/^v\d+\.\d+\.\d+([-+][0-9A-Za-z.+-]+)?$/.test(use.text)) throw invalidArgument(use, 'must be a semantic version like v1.32.0')
    return { report: use.text }
  }
  const print = parseBool(use.text)
  if ('reason' in print) throw invalidArgument(use, 'must be true, false, raw or a version like v1.32.0')
  return print.value ? { print: 'text' } : undefined
}

/**
 * Reads argv (without the runtime and script). Throws FlagError for an
 * unknown flag, a missing or malformed value, or positional arguments.
 * Cross-flag rules are separate (rules/index.ts: validateFlags).
 */
export function parseCommandLine(argv: readonly string[]): CommandLine {
  const values = defaultValues() as Record<string, unknown>
  const given = new Map<string, unknown>()
  const set = new Set<FlagName>()
  const spelled = new Map<FlagName, string>()
  let printVersion: 'text' | 'raw' | undefined
  for (const use of tokenize(argv)) {
    const name = use.spec.name as FlagName
    if (use.spec.kind === 'version') {
      const request = versionRequest(use)
      printVersion = request && 'print' in request ? request.print : undefined
      if (request && 'report' in request) values[name] = request.report
    } else {
      const parsed = kindOf(use.spec).parse(use.text, given.get(name))
      if ('reason' in parsed) throw invalidArgument(use, parsed.reason)
      given.set(name, parsed.value)
      values[name] = parsed.value
    }
    set.add(name)
    spelled.set(name, use.spelled)
  }
  const flags: ParsedFlags = { values: values as FlagValues, set, spelled }
  if (flags.values.help) return { action: 'help' }
  if (printVersion) return { action: 'version', raw: printVersion === 'raw', version: flags.values.version }
  return { action: 'run', flags }
}
