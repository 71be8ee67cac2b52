/**
 * Runs a share of a suite's test files in one process: loading the
 * TypeScript loader and the server's modules costs about a second and a
 * half per process, which a process per file paid over 200 times. Each
 * file runs inside a suite named by its path, so its top-level hooks
 * (before, after, beforeEach) stay with its own tests.
 */
import { readdirSync } from 'node:fs'
import { describe } from 'node:test'
import { join, relative } from 'node:path'
import { pathToFileURL } from 'node:url'
import { useLazyResponseBodies } from '../../core/http/bytes-response.js'

// As the package's Node entry points do: the tests run the server as Node users get it.
useLazyResponseBodies()

const TEST_ROOT = join(import.meta.dirname, '..')

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? testFiles(join(dir, e.name)) : e.name.endsWith('.test.ts') ? [join(dir, e.name)] : []))
    .sort()
}

/**
 * Registers every `count`-th test file of `folders` (under test/), starting
 * at `index` (0-based), each as a suite named by its path.
 */
export function runShare(folders: readonly string[], index: number, count: number): void {
  const files = folders.flatMap((folder) => testFiles(join(TEST_ROOT, folder))).filter((_, i) => i % count === index)
  for (const file of files) {
    describe(relative(TEST_ROOT, file), async () => {
      await import(pathToFileURL(file).href)
    })
  }
}
