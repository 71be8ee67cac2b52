/**
 * The URL of a module of the built package (`dist/`), for a child process a
 * test starts: plain Node loads the built JavaScript in a fraction of a
 * second, where the TypeScript loader takes seconds to compile the server's
 * sources again in each child. `npm test` builds before it runs the tests;
 * run `npm run build` after a change before running such a test alone.
 */
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/** `source` is the module's path from the project's root, as written in the sources: `core/index.ts`. */
export function builtModule(source: string): string {
  const url = new URL(`../../dist/${source.replace(/\.ts$/, '.js')}`, import.meta.url)
  if (!existsSync(fileURLToPath(url))) throw new Error(`${fileURLToPath(url)} is missing: run \`npm run build\` first`)
  return url.href
}
