/** Writing one bench's section of docs/benchmarks.md between its markers. */
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

/** Puts `section` into docs/benchmarks.md in place of the text between `begin` and `end`, or at the end. */
export async function replaceSection(root: string, begin: string, end: string, section: string): Promise<void> {
  const file = join(root, 'docs', 'benchmarks.md')
  const page = await readFile(file, 'utf8')
  const start = page.indexOf(begin)
  const stop = page.indexOf(end)
  const next =
    start >= 0 && stop > start ? page.slice(0, start) + section.trimEnd() + page.slice(stop + end.length) : `${page.trimEnd()}\n\n${section}`
  await writeFile(file, next)
}
