/**
 * A request's query parameters, read once per request. A query may be a
 * megabyte (upstream bounds the request line by 1 MiB, limits.ts), and the
 * runtime's URLSearchParams parser takes several milliseconds over that in
 * one piece; the filters and the handler all read the same parameters.
 */

const parsed = new WeakMap<Request, URLSearchParams>()

export function queryOf(request: Request): URLSearchParams {
  let query = parsed.get(request)
  if (!query) {
    const url = request.url
    const at = url.indexOf('?')
    query = at < 0 ? new URLSearchParams() : parseQuery(url.slice(at + 1).split('#', 1)[0]!)
    parsed.set(request, query)
  }
  return query
}

/**
 * The parameters of a query string as URLSearchParams reads them, its pairs
 * decoded by the runtime's native decodeURIComponent; a malformed escape,
 * which URLSearchParams keeps as it is, sends the text to it instead.
 */
export function parseQuery(search: string): URLSearchParams {
  const pairs: Array<[string, string]> = []
  try {
    for (const part of search.split('&')) {
      if (part === '') continue
      const eq = part.indexOf('=')
      const name = eq < 0 ? part : part.slice(0, eq)
      const value = eq < 0 ? '' : part.slice(eq + 1)
      pairs.push([decodeComponent(name), decodeComponent(value)])
    }
  } catch {
    // A leading `&` keeps the constructor from dropping a leading `?`, which belongs to the first name here.
    return new URLSearchParams(`&${search}`)
  }
  return new URLSearchParams(pairs)
}

function decodeComponent(text: string): string {
  const spaced = text.includes('+') ? text.replaceAll('+', ' ') : text
  return spaced.includes('%') ? decodeURIComponent(spaced) : spaced
}
