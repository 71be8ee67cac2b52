/**
 * `--help`, generated from the table and laid out like upstream's: a
 * usage line, then one block per section, each flag with its type, its
 * help, its default, and whether it is in effect yet.
 */
import { KINDS } from './kinds.js'
import { SECTIONS, type FlagSpec } from './spec.js'
import { sectionFlags } from './table.js'

/** Help is wrapped to a fixed width so that it reads the same everywhere (and a test can compare it). */
const HELP_WIDTH = 120
const MIN_TEXT_WIDTH = 40

export const PENDING_MARK = '(accepted, not yet in effect)'
export const REFUSED_MARK = '(not enforced yet: giving it stops start-up)'

/** The type name shown after the flag, as pflag's Type(); empty for booleans. */
export function typeName(spec: FlagSpec): string {
  return KINDS[spec.kind].typeName
}

/** The default as help shows it, or undefined when help leaves it out (a zero value, as pflag does). */
export function defaultText(spec: FlagSpec): string | undefined {
  if (spec.defaultText !== undefined) return spec.defaultText
  const show = KINDS[spec.kind].show as (value: unknown) => string | undefined
  return show(spec.default)
}

/** The help sentence with what follows it: other spellings, default, deprecation, and the pending mark. */
export function usage(spec: FlagSpec): string {
  const parts = [spec.help]
  if (spec.aliases?.length) parts.push(`Also spelled ${spec.aliases.map((a) => `--${a}`).join(', ')}.`)
  const shown = defaultText(spec)
  if (shown !== undefined) parts.push(`(default ${shown})`)
  if (spec.deprecated) parts.push(`(DEPRECATED: ${spec.deprecated})`)
  if (spec.status === 'pending') parts.push(PENDING_MARK)
  if (spec.status === 'refused') parts.push(REFUSED_MARK)
  return parts.join(' ')
}

/** Greedy word wrap. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = []
  let line = ''
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line)
      line = word
    } else {
      line = line ? `${line} ${word}` : word
    }
  }
  if (line) lines.push(line)
  return lines
}

function sectionLines(flags: readonly FlagSpec[]): string[] {
  const left = flags.map((f) => {
    const names = f.short ? `  -${f.short}, --${f.name}` : `      --${f.name}`
    const type = typeName(f)
    return type ? `${names} ${type}` : names
  })
  // As pflag: the help column starts two spaces after the longest flag of the section.
  const column = Math.max(...left.map((l) => l.length)) + 2
  const width = Math.max(MIN_TEXT_WIDTH, HELP_WIDTH - column)
  return flags.flatMap((f, i) => {
    const [first = '', ...rest] = wrap(usage(f), width)
    return [`${(left[i] ?? '').padEnd(column)}${first}`, ...rest.map((l) => `${' '.repeat(column)}${l}`)]
  })
}

export function helpText(): string {
  const lines = [
    'apiserver: a Kubernetes-compatible API server. It checks and stores API objects',
    '(namespaces, configmaps, secrets, service accounts, ...), serves REST and watch',
    'over HTTPS, and is the one door through which the rest of a cluster shares state.',
    '',
    `Flags marked ${PENDING_MARK} are read and checked; when one is given,`,
    'a start-up warning says why it changes nothing yet. Security settings the server',
    `does not enforce yet are marked ${REFUSED_MARK}: the server refuses`,
    'to start rather than look closed while it is open.',
    '',
    'Usage:',
    '  apiserver [flags]',
  ]
  for (const section of SECTIONS) {
    const flags = sectionFlags(section)
    if (flags.length) lines.push('', `${section} flags:`, '', ...sectionLines(flags))
  }
  return `${lines.join('\n')}\n`
}
