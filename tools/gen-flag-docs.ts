/**
 * Dev-time generator: writes docs/flags.md, the flag reference, from the
 * flag table in core/options/flags/table/.
 *
 *   npx tsx tools/gen-flag-docs.ts
 *
 * test/unit/options/flags/docs.test.ts fails when the committed file and the
 * table disagree, so run this after changing a flag.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { flagReference } from '../core/options/flags/docs.js'

const target = join(import.meta.dirname, '..', 'docs', 'flags.md')
writeFileSync(target, flagReference())
process.stdout.write(`wrote ${target}\n`)
