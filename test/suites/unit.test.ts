/**
 * Every unit test file in one process: they share no state and each starts
 * in milliseconds, so one process saves the start-up of a runtime and the
 * TypeScript loader per file (minutes over the whole suite). Integration,
 * storage-contract and end-to-end files keep a process each.
 */
import { readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { pathToFileURL } from 'node:url'

const ROOT = join(import.meta.dirname, '..', 'unit')

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? testFiles(join(dir, e.name)) : e.name.endsWith('.test.ts') ? [join(dir, e.name)] : []))
    .sort()
}

for (const file of testFiles(ROOT)) {
  try {
    await import(pathToFileURL(file).href)
  } catch (err) {
    throw new Error(`${relative(ROOT, file)} failed to load: ${err instanceof Error ? err.message : String(err)}`)
  }
}
