/** The file Node loads for `import 'kube-apiserver-ts'` from a build, as a consumer's import resolves it. */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

/**
 * The `.` export of the package at `root` (a checkout with its build): its
 * `node` condition where it has one (the code-cached library script), else
 * the ES module build, as an older build has it. A file URL, for `import()`.
 */
export function packageEntry(root: string): string {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, { node?: string; default: string }> }
  const main = manifest.exports['.']!
  return pathToFileURL(join(root, main.node ?? main.default)).href
}

/** The bins' file of the build at `root`: main.cjs, or main.js in a build from before there was one (a baseline). */
export function daemonMainOf(root: string): string {
  const cjs = join(root, 'dist', 'runtimes', 'node', 'main.cjs')
  return existsSync(cjs) ? cjs : join(root, 'dist', 'runtimes', 'node', 'main.js')
}
