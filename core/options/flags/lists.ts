/**
 * Flag values that hold several items: comma lists (pflag's StringSlice,
 * which reads CSV), repeatable lists, `key=value` maps, the metric label
 * allow-list, `--vmodule` and `--tls-sni-cert-key`. A parser receives the
 * value collected so far when the flag repeats, and adds to it.
 */
import { bad, ok, type Parsed } from './values.js'

/** One record of Go's encoding/csv with its defaults: `a,"b,c",d` is three fields. */
export function readCsvRecord(text: string): Parsed<string[]> {
  const fields: string[] = []
  let i = 0
  for (;;) {
    if (text[i] === '"') {
      let field = ''
      let j = i + 1
      for (;;) {
        const quote = text.indexOf('"', j)
        if (quote < 0) return bad(`parse error on line 1, column ${text.length + 1}: extraneous or missing " in quoted-field`)
        field += text.slice(j, quote)
        if (text[quote + 1] !== '"') {
          i = quote + 1
          break
        }
        field += '"'
        j = quote + 2
      }
      fields.push(field)
      if (i >= text.length) return ok(fields)
      if (text[i] !== ',') return bad(`parse error on line 1, column ${i + 1}: extraneous or missing " in quoted-field`)
      i++
      continue
    }
    const comma = text.indexOf(',', i)
    const field = comma < 0 ? text.slice(i) : text.slice(i, comma)
    const quote = field.indexOf('"')
    if (quote >= 0) return bad(`parse error on line 1, column ${i + quote + 1}: bare " in non-quoted-field`)
    fields.push(field)
    if (comma < 0) return ok(fields)
    i = comma + 1
  }
}

/** pflag's StringSlice: `--x=a,b --x=c` gives a, b, c; the first use replaces the default; `--x=` gives none. */
export function parseStringList(text: string, previous: string[] | undefined): Parsed<string[]> {
  const read = text === '' ? ok<string[]>([]) : readCsvRecord(text)
  if ('reason' in read) return read
  return ok([...(previous ?? []), ...read.value])
}

/** pflag's StringArray: each use adds one item, commas included. */
export function parseRepeatedString(text: string, previous: string[] | undefined): Parsed<string[]> {
  return ok([...(previous ?? []), text])
}

/**
 * `--runtime-config`: comma-separated `key=value` pairs; a key without `=`
 * gets the empty value (which the API rules read as true).
 */
export function parseKeyValuePairs(text: string, previous: Record<string, string> | undefined): Parsed<Record<string, string>> {
  const map = { ...previous }
  for (const pair of text.split(',')) {
    if (pair === '') continue
    const eq = pair.indexOf('=')
    if (eq < 0) map[pair.trim()] = ''
    else map[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim()
  }
  return ok(map)
}

/** `--oidc-required-claim`: one `key=value` per use, the value may hold commas. */
export function parseKeyValue(text: string, previous: Record<string, string> | undefined): Parsed<Record<string, string>> {
  const eq = text.indexOf('=')
  if (eq < 0) return bad('malformed pair, expect string=string')
  return ok({ ...previous, [text.slice(0, eq).trim()]: text.slice(eq + 1).trim() })
}

/** A metric name, a comma and a label name, followed by `=`: where an allow-list entry starts. */
const METRIC_LABEL_KEY = /(^|[\s,"])([a-zA-Z_:][a-zA-Z0-9_:]*,[a-zA-Z_][a-zA-Z0-9_]*)=/g

/**
 * `--allow-metric-labels`: `Metric,Label=v1,v2` entries; the values may be
 * quoted (`Metric,Label='v1,v2'`) and several entries may follow each
 * other separated by commas or spaces. Gives `{ "Metric,Label": ["v1", "v2"] }`.
 */
export function parseMetricLabels(text: string, previous: Record<string, string[]> | undefined): Parsed<Record<string, string[]>> {
  const keys = [...text.matchAll(METRIC_LABEL_KEY)]
  const first = keys[0]
  if (!first || text.slice(0, (first.index ?? 0) + (first[1] ?? '').length).trim().replaceAll('"', '') !== '') {
    return bad('must be a list of <MetricName>,<LabelName>=<allowed_value>,<allowed_value>... entries')
  }
  const map = { ...previous }
  keys.forEach((m, i) => {
    const start = (m.index ?? 0) + m[0].length
    const next = keys[i + 1]
    const end = next ? (next.index ?? 0) + (next[1] ?? '').length : text.length
    const raw = text
      .slice(start, end)
      .trim()
      .replace(/^"+|[\s,"]+$/g, '')
      .replace(/^'(.*)'$/s, '$1')
    map[m[2] ?? ''] = raw === '' ? [] : raw.split(',').map((v) => v.trim())
  })
  return ok(map)
}

export interface VModuleItem {
  pattern: string
  verbosity: number
}

/** `--vmodule`: `pattern=N,...` as klog reads it; N fits in 31 bits. */
export function parseVModule(text: string, previous: VModuleItem[] | undefined): Parsed<VModuleItem[]> {
  const items = [...(previous ?? [])]
  for (const part of text.split(',')) {
    if (part === '') continue
    const [pattern = '', level = '', ...rest] = part.split('=')
    if (rest.length || pattern === '' || level === '') return bad(`${JSON.stringify(part)} does not have the pattern=N format`)
    if (!/^\d+$/.test(level) || BigInt(level) > 2n ** 31n - 1n) {
      return bad(`parsing verbosity in ${JSON.stringify(part)}: strconv.ParseUint: parsing ${JSON.stringify(level)}: invalid syntax`)
    }
    items.push({ pattern, verbosity: Number(level) })
  }
  return ok(items)
}

export interface NamedCertKey {
  certFile: string
  keyFile: string
  /** Domain patterns; empty means the names in the certificate. */
  names: string[]
}

/** `--tls-sni-cert-key`: `cert,key` or `cert,key:name1,name2`; repeat the flag for more pairs. */
export function parseNamedCertKey(text: string, previous: NamedCertKey[] | undefined): Parsed<NamedCertKey[]> {
  const colon = text.indexOf(':')
  const pair = (colon < 0 ? text : text.slice(0, colon)).trim()
  let names: string[] = []
  if (colon >= 0) {
    const list = text.slice(colon + 1).trim()
    if (list === '') return bad('empty names list is not allowed')
    names = list.split(',').map((n) => n.trim())
  }
  const files = pair.split(',')
  if (files.length !== 2) return bad('expected comma separated certificate and key file paths')
  return ok([...(previous ?? []), { certFile: (files[0] ?? '').trim(), keyFile: (files[1] ?? '').trim(), names }])
}
