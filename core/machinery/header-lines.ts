/**
 * A header's values one line at a time, as Go's server keeps them.
 *
 * Upstream reads the identity headers by their lines: each
 * `Impersonate-Group` or `Impersonate-Extra-*` line is one value, a group
 * sent as `a,b` on one line is the single group `a,b`, and
 * `Impersonate-User` and `Impersonate-Uid` (like the front proxy's user
 * headers) are their first line. Fetch's Headers joins repeated lines with
 * ", ", so where the runtime hands over the lines it read (the Node
 * listener does, as `ConnectionInfo.headerLines`) they are read from those.
 * An in-process caller's Headers cannot carry them: its joined value is
 * split at commas, and a value holding a comma cannot be told from two.
 */

/** A request's header lines as received: name, value, name, value, ... (Node's `rawHeaders`). */
export type HeaderLines = readonly string[]

/** Each line's value of header `name` (lower case), or [] once the header is gone from `headers` (a filter removed it). */
export function headerLineValues(headers: Headers, name: string, lines: HeaderLines | undefined): string[] {
  const joined = headers.get(name)
  if (joined === null) return []
  if (lines) {
    const values: string[] = []
    for (let i = 0; i + 1 < lines.length; i += 2) if (lines[i]!.toLowerCase() === name) values.push(lines[i + 1]!.trim())
    if (values.length > 0) return values
  }
  return joined.split(',').map((v) => v.trim())
}

/** The first line's value of header `name` (lower case), as Go's `Header.Get`; '' when it is absent. */
export function firstHeaderLine(headers: Headers, name: string, lines: HeaderLines | undefined): string {
  const joined = headers.get(name)
  if (joined === null) return ''
  if (lines) {
    for (let i = 0; i + 1 < lines.length; i += 2) if (lines[i]!.toLowerCase() === name) return lines[i + 1]!.trim()
  }
  return joined
}

/**
 * The values of the headers `names` accepts, by lower-case name, from the
 * lines in one pass: asking headerLineValues for each of thousands of
 * distinct names (`Impersonate-Extra-*`, a front proxy's `X-Remote-Extra-*`)
 * read every line again for each, some ten seconds for 20,000 of them. Without
 * the lines, or for a header whose lines are not among them, each value comes
 * from `headers` as headerLineValues reads it.
 */
export class HeaderLinesByName {
  private readonly byName = new Map<string, string[]>()

  constructor(
    private readonly headers: Headers,
    lines: HeaderLines | undefined,
    names: (name: string) => boolean,
  ) {
    if (!lines) return
    for (let i = 0; i + 1 < lines.length; i += 2) {
      const name = lines[i]!.toLowerCase()
      if (!names(name)) continue
      let values = this.byName.get(name)
      if (!values) this.byName.set(name, (values = []))
      values.push(lines[i + 1]!.trim())
    }
  }

  /** Each line's value of header `name` (lower case), as headerLineValues gives them. */
  values(name: string): string[] {
    if (!this.headers.has(name)) return []
    return this.byName.get(name) ?? headerLineValues(this.headers, name, undefined)
  }

  /** The first line's value of header `name` (lower case), as firstHeaderLine gives it. */
  first(name: string): string {
    if (!this.headers.has(name)) return ''
    return this.byName.get(name)?.[0] ?? firstHeaderLine(this.headers, name, undefined)
  }
}

/**
 * Headers upstream reads with Go's `Header.Get`, the first line alone:
 * credentials (`Authorization`), the body's and the answer's media types,
 * the compression asked for, the client's name and the source addresses a
 * proxy added. Fetch's Headers joins their repeated lines with ", ", which
 * would make `Bearer a` and `Bearer b` one token no authenticator knows and
 * two `Content-Type` lines a type no decoder takes.
 */
const FIRST_LINE_HEADERS: ReadonlySet<string> = new Set(['authorization', 'content-type', 'accept', 'accept-encoding', 'user-agent', 'x-forwarded-for', 'x-real-ip'])

/**
 * Sets each header of FIRST_LINE_HEADERS sent on more than one line to its
 * first line's value, as Go's handlers see it. `headers` must be mutable.
 */
export function keepFirstLines(headers: Headers, lines: HeaderLines): void {
  let firstLines: Map<string, string> | undefined
  for (let i = 0; i + 1 < lines.length; i += 2) {
    const name = lines[i]!.toLowerCase()
    if (!FIRST_LINE_HEADERS.has(name)) continue
    firstLines ??= new Map()
    const first = firstLines.get(name)
    // Only a repeated header was joined; its first line stands for it.
    if (first === undefined) firstLines.set(name, lines[i + 1]!)
    else headers.set(name, first)
  }
}
