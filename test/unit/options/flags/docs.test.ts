import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { FLAGS, flagReference } from '../../../../core/options/flags/index.js'

const DOC = join(import.meta.dirname, '..', '..', '..', '..', 'docs', 'flags.md')

describe('docs/flags.md', () => {
  it('is what tools/gen-flag-docs.ts generates from the table (run it after changing a flag)', () => {
    assert.equal(readFileSync(DOC, 'utf8'), flagReference())
  })

  it('has one row per flag, with its status', () => {
    const doc = flagReference()
    for (const spec of FLAGS) {
      const row = doc.split('\n').find((l) => l.startsWith(`| \`--${spec.name}\` |`)) ?? assert.fail(`--${spec.name} has no row`)
      const status = { active: '| in effect |', pending: '| accepted, not yet in effect: ', refused: '| refused at start-up (security setting not enforced yet): ' }
      assert.ok(row.includes(status[spec.status]), row)
      for (const alias of spec.aliases ?? []) assert.ok(row.includes(`\`--${alias}\``), row)
    }
  })

  it('keeps table cells intact when the text holds pipes or angle brackets', () => {
    const row = flagReference()
      .split('\n')
      .find((l) => l.startsWith('| `--cors-allowed-origins` |'))
    assert.ok(row?.includes("'//example\\.com(:\\|$)'"), row)
    const versions = flagReference()
      .split('\n')
      .find((l) => l.startsWith('| `--emulated-version` |'))
    assert.ok(versions?.includes('[component=]&lt;major&gt;.&lt;minor&gt;'), versions)
  })
})
