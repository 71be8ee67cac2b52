/**
 * Runs a share of a suite's test files in one process: loading the
 * TypeScript loader and the server's modules costs about a second and a
 * half per process, which a process per file paid over 200 times. Each
 * file runs inside a suite named by its path, so its top-level hooks
 * (before, after, beforeEach) stay with its own tests.
 */
import { describe } from 'node:test'
import { relative } from 'node:path'
import { pathToFileURL } from 'node:url'
import { useLazyResponseBodies } from '../../core/http/bytes-response.js'
import { shareOf, TEST_ROOT } from './files.js'

// As the package's Node entry points do: the tests run the server as Node users get it.
useLazyResponseBodies()

/** Registers the share `index` of `count` of the files of `folders` (under test/), each as a suite named by its path. */
export function runShare(folders: readonly string[], index: number, count: number): void {
  for (const file of shareOf(folders, index, count)) {
    describe(relative(TEST_ROOT, file), async () => {
      await import(pathToFileURL(file).href)
    })
  }
}
