/**
 * Slash-separated paths cleaned on their text, as Go's path.Clean does
 * (core has no `node:path`): file references in config files, and the path
 * a proxy subresource forwards.
 */

/** Go's path.Clean: no `.` segments, `..` folded where it can be, no doubled or trailing slashes. */
export function cleanPath(path: string): string {
  if (path === '') return '.'
  const rooted = path.startsWith('/')
  const out: string[] = []
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue
    if (segment === '..' && out.length > 0 && out[out.length - 1] !== '..') out.pop()
    else if (segment === '..' && rooted) continue
    else out.push(segment)
  }
  const joined = out.join('/')
  if (rooted) return `/${joined}`
  return joined || '.'
}

/**
 * Upstream's JoinPreservingTrailingSlash of a rooted base and a request's
 * path: joined and cleaned, a trailing slash of `elem` kept. The result is
 * rooted and starts with a single slash, so no text of `elem` (`//host:port/`)
 * can be read as a host when the path is put after an origin.
 */
export function joinPreservingTrailingSlash(base: string, elem: string): string {
  const joined = cleanPath(`/${base}/${elem}`)
  return elem.endsWith('/') && !joined.endsWith('/') ? `${joined}/` : joined
}
