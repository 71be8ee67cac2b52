import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { defaultText, typeName } from '../../../../core/options/flags/help.js'
import { FLAGS, helpText, PENDING_MARK } from '../../../../core/options/flags/index.js'

const GOLDEN = join(import.meta.dirname, '..', '..', '..', 'golden', 'help.txt')

/** Each flag's entry in the help, keyed by its name, wrapped lines joined back into one. */
function entries(help: string): Map<string, string> {
  const found = new Map<string, string>()
  let current: string | undefined
  for (const line of help.split('\n')) {
    const start = /^(?: {2}-\w, | {6})--([\w-]+)/.exec(line)
    if (start?.[1]) {
      current = start[1]
      found.set(current, line.trim())
    } else if (current && /^ {10,}\S/.test(line)) {
      found.set(current, `${found.get(current)} ${line.trim()}`)
    } else {
      current = undefined
    }
  }
  return found
}

describe('--help', () => {
  it('matches test/golden/help.txt (UPDATE_GOLDEN=1 rewrites it)', () => {
    const help = helpText()
    if (process.env.UPDATE_GOLDEN) writeFileSync(GOLDEN, help)
    assert.equal(help, readFileSync(GOLDEN, 'utf8'))
  })

  it('starts with the usage line and shows the sections in upstream order', () => {
    const help = helpText()
    assert.match(help, /\nUsage:\n {2}apiserver \[flags\]\n\nGeneric flags:\n\n/)
    const sections = [...help.matchAll(/^(.+) flags:$/gm)].map((m) => m[1])
    assert.deepEqual(sections, [
      'Generic',
      'Persistence',
      'Secure serving',
      'Auditing',
      'Features',
      'Authentication',
      'Authorization',
      'API enablement',
      'Egress selector',
      'Admission',
      'Metrics',
      'Logs',
      'Traces',
      'Misc',
      'Global',
    ])
  })

  it('shows every flag with its type, its default, and whether it is in effect', () => {
    const found = entries(helpText())
    assert.equal(found.size, FLAGS.length)
    for (const spec of FLAGS) {
      const entry = found.get(spec.name) ?? assert.fail(`--${spec.name} is missing`)
      const type = typeName(spec)
      assert.ok(entry.includes(`--${spec.name}${type ? ` ${type}` : ''} `), `--${spec.name}: ${entry}`)
      const shown = defaultText(spec)
      if (shown !== undefined) assert.ok(entry.includes(`(default ${shown})`), `--${spec.name} shows its default ${shown}: ${entry}`)
      else assert.ok(!entry.includes('(default '), `--${spec.name} shows no default: ${entry}`)
      assert.equal(entry.endsWith(PENDING_MARK), spec.status === 'pending', `--${spec.name}: ${entry}`)
      for (const alias of spec.aliases ?? []) assert.ok(entry.includes(`--${alias}`), `--${spec.name} names --${alias}`)
    }
  })

  it('shows shorthands and deprecations as upstream does', () => {
    const found = entries(helpText())
    assert.match(found.get('help') ?? '', /^-h, --help {2,}Print this help and exit\.$/)
    assert.match(found.get('v') ?? '', /^-v, --v Level {2,}Log verbosity level:/)
    assert.match(found.get('admission-control') ?? '', /\(DEPRECATED: Use --enable-admission-plugins or --disable-admission-plugins instead\. Will be removed in a future version\.\)/)
    assert.match(found.get('secure-port') ?? '', /^--secure-port int {2,}Port of the HTTPS endpoint.*\(default 6443\)$/)
    assert.match(found.get('cert-dir') ?? '', /\(default "\/var\/run\/platform"\)$/)
    assert.match(found.get('allow-metric-labels') ?? '', /\(default \[\]\)/)
  })
})
