/**
 * Dot segments (`.`, `..`, and their escaped forms `%2e`, `.%2E` ...) in a
 * request's path. A Web Request's URL resolves them (the URL standard
 * removes `a/..`, escaped or not), so `/api/v1/namespaces/team-a/%2e%2e/team-b/secrets`
 * would reach team-b's Secrets, where upstream's server keeps every segment
 * as sent (a name or namespace `..` is refused there). A front proxy or
 * gateway that judged the path as sent would be bypassed: such a path is
 * refused before it becomes a Request.
 */

/** The first dot segment of the path of `target` (a request line's target), undefined when it has none. */
export function dotSegmentOf(target: string): string | undefined {
  const query = target.indexOf('?')
  const path = query < 0 ? target : target.slice(0, query)
  // Most paths have no segment that begins with a dot, escaped or not.
  if (!path.includes('/.') && !/\/%2e/i.test(path)) return undefined
  for (const segment of path.split('/')) {
    const plain = segment.replace(/%2e/gi, '.')
    if (plain === '.' || plain === '..') return segment
  }
  return undefined
}

/** The refusal's text, naming the segment as the client sent it. */
export function dotSegmentMessage(segment: string): string {
  return `the request path may not contain the segment '${segment}'`
}
