/**
 * `--token-auth-file`: a CSV file of `token,user,uid[,"group1,group2"]`
 * records (spec: Authentication flags). Parsing follows upstream's tokenfile
 * package, which reads the file with Go's encoding/csv: blank lines are
 * skipped, `#` is NOT a comment, fields may be quoted (`""` escapes a quote,
 * quoted fields may span lines), every record needs at least three columns,
 * a record with an empty token is skipped, a repeated token keeps the last
 * record, and the fourth column is split on every comma, so `"a,,b"` names
 * the three groups "a", "" and "b", exactly as upstream's user info shows them.
 */
import type { UserInfo } from '../machinery/object.js'

/** One line of a `--token-auth-file`: `token,user,uid,"group1,group2"`. */
export interface StaticToken {
  token: string
  user: UserInfo
}

/** A record that upstream accepts with a warning (empty or duplicate token). */
export interface TokenFileWarning {
  line: number
  message: string
}

export class TokenFileError extends Error {
  constructor(
    readonly source: string,
    readonly line: number,
    reason: string,
  ) {
    super(`${source}: line ${line}: ${reason}`)
    this.name = 'TokenFileError'
  }
}

interface CsvRecord {
  /** Line on which the record starts, 1-based. */
  line: number
  fields: string[]
}

/**
 * Reads CSV the way Go's encoding/csv does with its defaults (no comment
 * character, no lazy quotes, no trimming), so a file that works upstream
 * parses identically here.
 */
function readCsv(text: string, source: string): CsvRecord[] {
  // Go's reader drops \r before \n and a lone \r at the very end; a leading
  // BOM would otherwise become part of the first token and silently never match.
  const input = text.replace(/^\uFEFF/, '').replace(/\r\n/g, '\n').replace(/\r$/, '')
  const records: CsvRecord[] = []
  let line = 1
  let pos = 0
  while (pos < input.length) {
    if (input[pos] === '\n') {
      // A blank line is not a record.
      line++
      pos++
      continue
    }
    const start = line
    const fields: string[] = []
    for (;;) {
      let field = ''
      if (input[pos] === '"') {
        pos++
        for (;;) {
          const quote = input.indexOf('"', pos)
          if (quote === -1) throw new TokenFileError(source, start, 'extraneous or missing " in quoted-field')
          const chunk = input.slice(pos, quote)
          line += chunk.split('\n').length - 1
          field += chunk
          pos = quote + 1
          if (input[pos] === '"') {
            field += '"'
            pos++
            continue
          }
          break
        }
        const next = input[pos]
        if (next !== undefined && next !== ',' && next !== '\n') {
          throw new TokenFileError(source, line, 'extraneous or missing " in quoted-field')
        }
      } else {
        let end = pos
        while (end < input.length && input[end] !== ',' && input[end] !== '\n') end++
        field = input.slice(pos, end)
        if (field.includes('"')) throw new TokenFileError(source, line, 'bare " in non-quoted-field')
        pos = end
      }
      fields.push(field)
      if (input[pos] === ',') {
        pos++
        continue
      }
      break
    }
    if (input[pos] === '\n') {
      line++
      pos++
    }
    records.push({ line: start, fields })
  }
  return records
}

/**
 * Parses the text of a `--token-auth-file`. Errors name the file and line
 * (`tokens.csv: line 3: ...`); records upstream only warns about are
 * reported through `onWarning`.
 */
export function parseTokenFile(
  text: string,
  source = 'token file',
  onWarning: (warning: TokenFileWarning) => void = () => {},
): StaticToken[] {
  const byToken = new Map<string, StaticToken>()
  for (const { line, fields } of readCsv(text, source)) {
    if (fields.length < 3) {
      throw new TokenFileError(
        source,
        line,
        `must have at least 3 columns (token, user name, user uid), found ${fields.length}`,
      )
    }
    const [token = '', username = '', uid = '', groupList] = fields
    if (token === '') {
      onWarning({ line, message: 'empty token, record skipped' })
      continue
    }
    if (byToken.has(token)) {
      onWarning({ line, message: 'duplicate token, the later record wins' })
      // Delete first so the surviving record keeps file order.
      byToken.delete(token)
    }
    const user: UserInfo = { username, groups: [] }
    if (uid !== '') user.uid = uid
    // Upstream splits on "," and keeps empty names (an empty fourth column is one group named "").
    if (groupList !== undefined) user.groups = groupList.split(',')
    byToken.set(token, { token, user })
  }
  return [...byToken.values()]
}
