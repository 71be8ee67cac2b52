/**
 * A share of the unit test files in one process: they share no state and
 * each starts in milliseconds, so a process per share saves the start-up of
 * a runtime and the TypeScript loader per file (minutes over the whole
 * suite). Unlike the other suites' shares, the files are imported as they
 * are, their tests at the top level, and the response bodies left as the
 * core makes them.
 */
import { relative } from 'node:path'
import { pathToFileURL } from 'node:url'
import { shareOf, TEST_ROOT } from './files.js'

export async function runUnitShare(index: number, count: number): Promise<void> {
  for (const file of shareOf(['unit'], index, count)) {
    try {
      await import(pathToFileURL(file).href)
    } catch (err) {
      throw new Error(`${relative(TEST_ROOT, file)} failed to load: ${err instanceof Error ? err.message : String(err)}`)
    }
  }
}
