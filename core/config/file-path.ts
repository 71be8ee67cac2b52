/**
 * File references inside a config file are relative to that file's
 * directory, as upstream resolves them (an admission plugin's `path`, a
 * kubeconfig's `certificate-authority`, `client-key`, `tokenFile`). Core has
 * no `node:path`, so the joining is done on the text, POSIX style, the way
 * Go's filepath.Join cleans it.
 */
import { cleanPath } from '../machinery/clean-path.js'

export { cleanPath }

/** `/` first, or a drive letter on Windows. */
export function isAbsolutePath(path: string): boolean {
  return path.startsWith('/') || /^[A-Za-z]:[\\/]/.test(path)
}

/** The directory part of `path` (`a/b/c.yaml` -> `a/b`, `c.yaml` -> `.`), as Go's filepath.Dir. */
export function directoryOf(path: string): string {
  const slash = path.lastIndexOf('/')
  if (slash < 0) return '.'
  return cleanPath(path.slice(0, slash) || '/')
}

/**
 * `path` as seen from the directory of the file `source` refers to it in:
 * absolute paths stay as they are, relative ones are joined to that directory.
 * When `source` has no directory part the path stays relative to the working
 * directory, which is where the runtime resolves it.
 */
export function resolveFrom(source: string, path: string): string {
  if (path === '' || isAbsolutePath(path)) return path
  return cleanPath(`${directoryOf(source)}/${path}`)
}
