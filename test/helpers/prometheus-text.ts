/**
 * A strict reader of the Prometheus text exposition format (0.0.4), for
 * tests that scrape `/metrics`: prom-client writes this format but has no
 * reader. It throws on anything a Prometheus server would refuse or that
 * upstream's client never writes: a sample before its family's TYPE, a
 * family declared twice, a repeated series, a malformed name, label or
 * value, and histograms whose buckets are not cumulative or whose +Inf
 * bucket differs from their count.
 */

export interface PromSample {
  /** The sample's own name (`x_bucket`, `x_sum`... for a histogram). */
  name: string
  labels: Record<string, string>
  value: number
}

export interface PromFamily {
  name: string
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped'
  help: string
  samples: PromSample[]
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped'])

function parseValue(text: string, line: number): number {
  if (text === '+Inf') return Infinity
  if (text === '-Inf') return -Infinity
  if (text === 'NaN') return NaN
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) throw new Error(`line ${line}: bad value ${JSON.stringify(text)}`)
  return Number(text)
}

/** Reads `{a="x",b="y"}` from `text` at `start`; returns the labels and where they end. */
function parseLabels(text: string, start: number, line: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {}
  let i = start + 1
  const fail = (why: string): never => {
    throw new Error(`line ${line}: ${why} in ${JSON.stringify(text)}`)
  }
  while (text[i] !== '}') {
    const eq = text.indexOf('=', i)
    if (eq < 0) fail('label without =')
    const name = text.slice(i, eq)
    if (!LABEL_NAME.test(name)) fail(`bad label name ${JSON.stringify(name)}`)
    if (name in labels) fail(`label ${name} twice`)
    if (text[eq + 1] !== '"') fail('label value not quoted')
    let value = ''
    let j = eq + 2
    for (;;) {
      const ch = text[j]
      if (ch === undefined) fail('unterminated label value')
      if (ch === '"') break
      if (ch === '\\') {
        const next = text[j + 1]
        if (next === 'n') value += '\n'
        else if (next === '\\' || next === '"') value += next
        else fail('bad escape')
        j += 2
        continue
      }
      value += ch
      j++
    }
    labels[name] = value
    i = j + 1
    if (text[i] === ',') i++
    else if (text[i] !== '}') fail('expected , or }')
  }
  return { labels, end: i + 1 }
}

/** The family a sample name belongs to, given the declared families. */
function familyOf(sampleName: string, families: Map<string, PromFamily>): PromFamily | undefined {
  const exact = families.get(sampleName)
  if (exact) return exact
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!sampleName.endsWith(suffix)) continue
    const family = families.get(sampleName.slice(0, -suffix.length))
    if (family && (family.type === 'histogram' || (family.type === 'summary' && suffix !== '_bucket'))) return family
  }
  return undefined
}

function checkHistogram(family: PromFamily): void {
  const series = new Map<string, PromSample[]>()
  const counts = new Map<string, number>()
  for (const s of family.samples) {
    const { le, ...rest } = s.labels
    const key = JSON.stringify(Object.entries(rest).sort())
    if (s.name.endsWith('_bucket')) {
      if (le === undefined) throw new Error(`${family.name}: bucket without le`)
      series.set(key, [...(series.get(key) ?? []), s])
    } else if (s.name.endsWith('_count')) counts.set(key, s.value)
  }
  for (const [key, buckets] of series) {
    let previousBound = -Infinity
    let previous = 0
    for (const b of buckets) {
      const bound = parseValue(b.labels.le ?? '', 0)
      if (!(bound > previousBound)) throw new Error(`${family.name}: le not ascending`)
      if (b.value < previous) throw new Error(`${family.name}: buckets not cumulative`)
      previousBound = bound
      previous = b.value
    }
    if (previousBound !== Infinity) throw new Error(`${family.name}: no +Inf bucket`)
    if (counts.get(key) !== previous) throw new Error(`${family.name}: +Inf bucket ${previous} differs from count ${counts.get(key)}`)
  }
}

export function parsePrometheusText(text: string): Map<string, PromFamily> {
  const families = new Map<string, PromFamily>()
  const seen = new Set<string>()
  const lines = text.split('\n')
  if (lines.at(-1) !== '') throw new Error('the exposition does not end with a newline')
  lines.forEach((raw, index) => {
    const line = index + 1
    if (raw === '') return
    if (raw.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(raw)
      if (!m) return // a comment
      const [, keyword, name = '', rest = ''] = m
      if (!NAME.test(name)) throw new Error(`line ${line}: bad metric name ${JSON.stringify(name)}`)
      let family = families.get(name)
      if (keyword === 'TYPE') {
        if (!TYPES.has(rest)) throw new Error(`line ${line}: bad type ${JSON.stringify(rest)}`)
        if (family?.samples.length || seen.has(`TYPE ${name}`)) throw new Error(`line ${line}: TYPE of ${name} again or after its samples`)
        seen.add(`TYPE ${name}`)
        if (family) family.type = rest as PromFamily['type']
        else families.set(name, (family = { name, type: rest as PromFamily['type'], help: '', samples: [] }))
      } else {
        if (seen.has(`HELP ${name}`)) throw new Error(`line ${line}: HELP of ${name} twice`)
        seen.add(`HELP ${name}`)
        if (family) family.help = rest
        else families.set(name, { name, type: 'untyped', help: rest, samples: [] })
      }
      return
    }
    const nameEnd = raw.search(/[{ ]/)
    if (nameEnd <= 0) throw new Error(`line ${line}: bad sample ${JSON.stringify(raw)}`)
    const name = raw.slice(0, nameEnd)
    if (!NAME.test(name)) throw new Error(`line ${line}: bad sample name ${JSON.stringify(name)}`)
    let labels: Record<string, string> = {}
    let rest = raw.slice(nameEnd)
    if (rest.startsWith('{')) {
      const parsed = parseLabels(raw, nameEnd, line)
      labels = parsed.labels
      rest = raw.slice(parsed.end)
    }
    const parts = rest.trim().split(' ')
    if (!rest.startsWith(' ') || parts.length < 1 || parts.length > 2) throw new Error(`line ${line}: bad value part ${JSON.stringify(rest)}`)
    const value = parseValue(parts[0] ?? '', line)
    const family = familyOf(name, families)
    if (!family) throw new Error(`line ${line}: sample ${name} before its family's TYPE`)
    const series = `${name}${JSON.stringify(Object.entries(labels).sort())}`
    if (seen.has(series)) throw new Error(`line ${line}: series ${series} twice`)
    seen.add(series)
    family.samples.push({ name, labels, value })
  })
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family)
  return families
}

/** The value of the one sample of `name` whose labels include `labels`; undefined when none. */
export function sampleValue(families: Map<string, PromFamily>, name: string, labels: Record<string, string> = {}): number | undefined {
  const family = familyOf(name, families)
  const matches = family?.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)) ?? []
  if (matches.length > 1) throw new Error(`${matches.length} samples of ${name} match ${JSON.stringify(labels)}`)
  return matches[0]?.value
}
