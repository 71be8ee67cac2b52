/**
 * docs/flags.md, generated from the table (tools/gen-flag-docs.ts writes
 * it; a test fails when the file and the table disagree).
 */
import { FEATURE_GATES } from './features.js'
import { defaultText, typeName } from './help.js'
import { type FlagSpec, SECTIONS } from './spec.js'
import { FLAGS, sectionFlags } from './table.js'
import { appendAll } from '../../machinery/append-all.js'

/** Text for a table cell: pipes escaped, angle brackets kept literal, on one line. */
function cell(text: string): string {
  return text.replaceAll('|', '\\|').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('\n', ' ')
}

function code(text: string): string {
  return `\`${text.replaceAll('|', '\\|')}\``
}

function statusCell(spec: FlagSpec): string {
  if (spec.status === 'active') return 'in effect'
  if (spec.status === 'refused') return `refused at start-up (security setting not enforced yet): ${cell(spec.pending ?? '')}`
  return `accepted, not yet in effect: ${cell(spec.pending ?? '')}`
}

function meaningCell(spec: FlagSpec): string {
  const notes: string[] = []
  if (spec.short) notes.push(`Shorthand -${spec.short}.`)
  if (spec.deprecated) notes.push(`Deprecated: ${spec.deprecated.replace(/\.$/, '')}.`)
  if (spec.extension) notes.push('Project extension, not in kube-apiserver.')
  return cell([spec.help, ...notes].join(' '))
}

function row(spec: FlagSpec): string {
  const shown = defaultText(spec)
  const cells = [
    code(`--${spec.name}`),
    (spec.aliases ?? []).map((a) => code(`--${a}`)).join(', '),
    typeName(spec) ? code(typeName(spec)) : 'bool',
    shown === undefined ? '' : code(shown),
    statusCell(spec),
    meaningCell(spec),
  ]
  return `| ${cells.join(' | ')} |`
}

export function flagReference(): string {
  const active = FLAGS.filter((f) => f.status === 'active').length
  const lines = [
    '# Command-line flags',
    '',
    '<!-- Generated from the flag table in core/options/flags/table/ by `npx tsx tools/gen-flag-docs.ts`. Do not edit by hand. -->',
    '',
    `\`apiserver [flags]\` accepts every flag of the specification (${FLAGS.length} flags with the project's own \`--data-dir\`).`,
    `${active} of them are in effect today. The others are accepted and checked, so that existing kube-apiserver`,
    'command lines keep working, and each one given logs a start-up warning saying why it changes nothing yet.',
    '',
    'Flags are spelled as in the specification; the upstream spelling of a renamed flag (`--etcd-*` for',
    '`--kvstore-*`, `--kubelet-*` for `--nodeagent-*`, `--kubernetes-service-node-port`) is accepted as well.',
    'Values follow upstream: `--flag=value` or `--flag value`; booleans take a value only after `=`;',
    'list flags take comma-separated values and may be repeated; durations are Go durations (`1m30s`).',
    'An empty Default is the zero value: false, 0, empty, or none.',
  ]
  for (const section of SECTIONS) {
    const flags = sectionFlags(section)
    if (!flags.length) continue
    lines.push('', `## ${section} flags`, '', '| Flag | Upstream alias | Type | Default | Status | Meaning |', '|---|---|---|---|---|---|')
    appendAll(lines, flags.map(row))
  }
  appendAll(lines, featureGateSection())
  return `${lines.join('\n')}\n`
}

/** The gates `--feature-gates` switches here, with upstream's stages per release. */
function featureGateSection(): string[] {
  const lines = [
    '',
    '## Feature gates',
    '',
    'The gates below switch what the server does; defaults follow upstream at the server\'s version, or at',
    '`--emulated-version` when given. A gate locked to its default refuses the other value, and a gate set',
    'at an emulated version older than the gate stops start-up. Any other gate name (besides AllAlpha and AllBeta) stops start-up too.',
    '',
    '| Gate | Stages (release: default) | What it changes |',
    '|---|---|---|',
  ]
  for (const [name, gate] of Object.entries(FEATURE_GATES)) {
    const stages = gate.stages.map((s) => `1.${s.since} ${s.stage}: ${s.default}${'locked' in s ? ' (locked)' : ''}`).join('; ')
    lines.push(`| ${code(name)} | ${cell(stages)} | ${cell(gate.effect)} |`)
  }
  return lines
}
