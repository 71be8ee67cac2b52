/** The test files of the suites' shares, found and dealt without loading any of them. */
import { readdirSync } from 'node:fs'
import { join, relative, sep } from 'node:path'

export const TEST_ROOT = join(import.meta.dirname, '..')

/** Every `*.test.ts` file under `dir`, in path order. */
export function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? testFiles(join(dir, e.name)) : e.name.endsWith('.test.ts') ? [join(dir, e.name)] : []))
    .sort()
}

/**
 * Files that take half a minute or more: dealt first, so that no two of them
 * share a process and lengthen the run's tail. A scheduling hint alone: a
 * file missing here or listed wrongly changes how long the run takes, never
 * what it runs.
 */
const LONG_FILES = ['e2e/real-world.test.ts', 'e2e/several-servers.test.ts', 'e2e/package.test.ts', 'e2e/serving-lifecycle.test.ts']

/**
 * Every `count`-th test file of `folders` (under test/), starting at `index`
 * (0-based): the long files dealt first, the others in path order.
 */
export function shareOf(folders: readonly string[], index: number, count: number): string[] {
  const files = folders.flatMap((folder) => testFiles(join(TEST_ROOT, folder)))
  const isLong = (file: string) => LONG_FILES.includes(relative(TEST_ROOT, file).split(sep).join('/'))
  return [...files.filter(isLong), ...files.filter((file) => !isLong(file))].filter((_, i) => i % count === index)
}
