/**
 * The server's metrics, served at `/metrics` in the Prometheus text format
 * upstream's component-base writes: gauges, set by the part of the server
 * that knows the figure, counters, added to as things happen, and
 * histograms with upstream's buckets. Plain code on Web APIs, so that every
 * runtime serves the same metrics; a runtime adds its own (the Node
 * process's) through `ServerPorts.runtimeMetrics`.
 *
 * The operator's filters of component-base apply here: `--disabled-metrics`
 * drops a family, `--allow-metric-labels` reports values outside a label's
 * list as `unexpected`, and deprecated metrics are hidden a release after
 * their deprecation unless `--show-hidden-metrics-for-version` names it.
 */
import { type MetricsFilterOptions, MetricsFilters } from './filters.js'

type Labels = Readonly<Record<string, string>>

interface Sample {
  labels: Labels
  value: number
  /** False from a reset until the sample is next set, added to or observed: it is left out of the text meanwhile. */
  shown: boolean
}

interface HistogramSample {
  labels: Labels
  /** Cumulative at render time; stored per bucket here. */
  counts: number[]
  sum: number
  count: number
  shown: boolean
}

/**
 * `samples` is keyed by the canonical label text (sorted, escaped: what the
 * scrape shows); `byCallerLabels` finds the same samples by a cheaper key of
 * the labels as a caller passes them, so that a hot path recording the same
 * labels again does not sort and escape them on every request.
 */
type Family =
  | { type: 'gauge' | 'counter'; help: string; samples: Map<string, Sample>; byCallerLabels: Map<string, Sample> }
  | {
      type: 'histogram'
      help: string
      buckets: readonly number[]
      samples: Map<string, HistogramSample>
      byCallerLabels: Map<string, HistogramSample>
    }

const NEEDS_ESCAPE = /[\\\n"]/

function escapeLabel(value: string): string {
  if (!NEEDS_ESCAPE.test(value)) return value
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')
}

/**
 * The labels in the caller's order, each name and value prefixed by its
 * length so that no two different label sets share a key. Its number of
 * entries is bounded by the samples' (times the orders callers use).
 */
function callerKey(labels: Labels): string {
  let key = ''
  for (const name in labels) {
    const value = labels[name] ?? ''
    key += `${name.length}:${name}${value.length}:${value}`
  }
  return key
}

/**
 * Label texts by caller key, shared by every Metrics of the process: each
 * server finds the same samples (a storage operation per resource, a
 * request's labels) and would sort and escape the same labels again. The
 * text is a function of the key; the cache starts over when it grows large.
 */
const labelTexts = new Map<string, string>()
const LABEL_TEXTS_KEPT = 10_000

function labelTextOf(fastKey: string, labels: Labels): string {
  let text = labelTexts.get(fastKey)
  if (text === undefined) {
    text = labelText(labels)
    if (labelTexts.size >= LABEL_TEXTS_KEPT) labelTexts.clear()
    labelTexts.set(fastKey, text)
  }
  return text
}

function labelText(labels: Labels, extra?: string): string {
  const pairs = Object.keys(labels)
    .sort()
    .map((k) => `${k}="${escapeLabel(labels[k] ?? '')}"`)
  if (extra) pairs.push(extra)
  return pairs.length ? `{${pairs.join(',')}}` : ''
}

/**
 * A number as Go's strconv.FormatFloat(v, 'g', -1, 64) writes it, which is
 * how upstream's client writes values and bucket bounds: the shortest
 * decimal, in exponent form (two exponent digits at least) below 1e-4 and
 * from 1e6 on.
 */
export function formatNumber(value: number): string {
  if (value === Infinity) return '+Inf'
  if (value === -Infinity) return '-Inf'
  if (Number.isNaN(value)) return 'NaN'
  if (value === 0) return '0'
  const [mantissa = '', exponentText = '0'] = value.toExponential().split('e')
  const exponent = Number(exponentText)
  if (exponent >= -4 && exponent < 6) return String(value)
  const digits = String(Math.abs(exponent)).padStart(2, '0')
  return `${mantissa}e${exponent < 0 ? '-' : '+'}${digits}`
}

const DROPPED: Sample = { labels: {}, value: 0, shown: false }
const DROPPED_HISTOGRAM: HistogramSample = { labels: {}, counts: [], sum: 0, count: 0, shown: false }

interface Definition {
  name: string
  help: string
  buckets?: readonly number[]
}

function observeIn(sample: HistogramSample, bounds: readonly number[], value: number): void {
  let i = 0
  while (i < bounds.length && value > (bounds[i] ?? Infinity)) i++
  if (i < bounds.length) sample.counts[i] = (sample.counts[i] ?? 0) + 1
  sample.sum += value
  sample.count++
  sample.shown = true
}

export interface HistogramHandle {
  observe(value: number): void
}

export interface GaugeHandle {
  set(value: number): void
  add(by: number): void
}

export class Metrics {
  private readonly families = new Map<string, Family>()
  private readonly filters: MetricsFilters

  constructor(options: MetricsFilterOptions = {}) {
    this.filters = new MetricsFilters(options)
  }

  setGauge(name: string, help: string, labels: Labels, value: number): void {
    const sample = this.sample(name, help, 'gauge', labels)
    sample.value = value
    sample.shown = true
  }

  /** Adds `by` (default 1) to a counter's sample; a new sample starts at 0. */
  addCounter(name: string, help: string, labels: Labels, by = 1): void {
    const sample = this.sample(name, help, 'counter', labels)
    sample.value += by
    sample.shown = true
  }

  /** A gauge's sample to set again and again without finding it each time (a hot path's gauge). */
  gauge(name: string, help: string, labels: Labels): GaugeHandle {
    const sample = this.sample(name, help, 'gauge', labels)
    return {
      set: (value) => {
        sample.value = value
        sample.shown = true
      },
      add: (by) => {
        sample.value += by
        sample.shown = true
      },
    }
  }

  /** A counter's sample to add to again and again without finding it each time (a hot path's counter). */
  counter(name: string, help: string, labels: Labels): { add(by?: number): void } {
    const sample = this.sample(name, help, 'counter', labels)
    return {
      add: (by = 1) => {
        sample.value += by
        sample.shown = true
      },
    }
  }

  /**
   * Upstream's registry Reset (`DELETE /metrics` with profiling on): every
   * series of a metric with labels (a vector upstream) is dropped, and
   * starts again from zero when next set, added to or observed; a metric
   * without labels keeps its value, as upstream's plain counters and
   * gauges are not resettable. Samples stay in place, so the handles hot
   * paths hold keep counting into the series they name.
   */
  reset(): void {
    for (const family of this.families.values()) {
      for (const sample of family.samples.values()) {
        if (Object.keys(sample.labels).length === 0) continue
        sample.shown = false
        if ('counts' in sample) {
          sample.counts.fill(0)
          sample.sum = 0
          sample.count = 0
        } else {
          sample.value = 0
        }
      }
    }
  }

  /** Records one observation in a histogram with the given upper bounds (ascending; +Inf is implied). */
  observe(name: string, help: string, buckets: readonly number[], labels: Labels, value: number): void {
    const sample = this.histogramSample(name, help, buckets, labels)
    if (sample === DROPPED_HISTOGRAM) return
    const family = this.families.get(name)
    observeIn(sample, family?.type === 'histogram' ? family.buckets : buckets, value)
  }

  /** A histogram's sample to observe again and again without finding it each time (a hot path's histogram). */
  histogram(name: string, help: string, buckets: readonly number[], labels: Labels): HistogramHandle {
    const sample = this.histogramSample(name, help, buckets, labels)
    if (sample === DROPPED_HISTOGRAM) return { observe: () => {} }
    const family = this.families.get(name)
    const bounds = family?.type === 'histogram' ? family.buckets : buckets
    return { observe: (value) => observeIn(sample, bounds, value) }
  }

  /** A defined histogram's sample. */
  histogramOf(metric: Definition, labels: Labels): HistogramHandle {
    return this.histogram(metric.name, metric.help, metric.buckets ?? [], labels)
  }

  /** Adds to a defined counter (core/metrics/definitions.ts). */
  inc(metric: Definition, labels: Labels, by = 1): void {
    this.addCounter(metric.name, metric.help, labels, by)
  }

  /** Records one observation of a defined histogram. */
  record(metric: Definition, labels: Labels, value: number): void {
    this.observe(metric.name, metric.help, metric.buckets ?? [], labels, value)
  }

  /** A defined gauge's sample. */
  gaugeOf(metric: Definition, labels: Labels): GaugeHandle {
    return this.gauge(metric.name, metric.help, labels)
  }

  /** The current value of a gauge or counter sample, or undefined when it was never set. */
  value(name: string, labels: Labels): number | undefined {
    const family = this.families.get(name)
    if (!family || family.type === 'histogram') return undefined
    const sample = family.samples.get(labelText(this.filters.constrain(name, labels)))
    return sample?.shown ? sample.value : undefined
  }

  private sample(name: string, help: string, type: 'gauge' | 'counter', labels: Labels): Sample {
    if (!this.filters.shown(name)) return { ...DROPPED }
    let family = this.families.get(name)
    if (!family) {
      family = { help, type, samples: new Map(), byCallerLabels: new Map() }
      this.families.set(name, family)
    }
    if (family.type === 'histogram') throw new Error(`metric ${name} is a histogram`)
    const fastKey = callerKey(labels)
    let sample = family.byCallerLabels.get(fastKey)
    if (sample) return sample
    const constrained = this.filters.constrain(name, labels)
    const key = constrained === labels ? labelTextOf(fastKey, labels) : labelText(constrained)
    sample = family.samples.get(key)
    if (!sample) {
      sample = { labels: constrained, value: 0, shown: true }
      family.samples.set(key, sample)
    }
    family.byCallerLabels.set(fastKey, sample)
    return sample
  }

  private histogramSample(name: string, help: string, buckets: readonly number[], labels: Labels): HistogramSample {
    if (!this.filters.shown(name)) return DROPPED_HISTOGRAM
    let family = this.families.get(name)
    if (!family) {
      family = { help, type: 'histogram', buckets, samples: new Map(), byCallerLabels: new Map() }
      this.families.set(name, family)
    }
    if (family.type !== 'histogram') throw new Error(`metric ${name} is not a histogram`)
    const fastKey = callerKey(labels)
    let sample = family.byCallerLabels.get(fastKey)
    if (sample) return sample
    const constrained = this.filters.constrain(name, labels)
    const key = constrained === labels ? labelTextOf(fastKey, labels) : labelText(constrained)
    sample = family.samples.get(key)
    if (!sample) {
      sample = { labels: constrained, counts: new Array<number>(family.buckets.length).fill(0), sum: 0, count: 0, shown: true }
      family.samples.set(key, sample)
    }
    family.byCallerLabels.set(fastKey, sample)
    return sample
  }

  /** The exposition text: `# HELP`, `# TYPE`, then one line per sample, names and labels sorted. */
  render(): string {
    const lines: string[] = []
    for (const name of [...this.families.keys()].sort()) {
      const family = this.families.get(name)
      // A metric whose every series was reset has nothing to show, as a vector without children upstream.
      if (!family || !anyShown(family.samples.values())) continue
      lines.push(`# HELP ${name} ${this.filters.help(name, family.help)}`, `# TYPE ${name} ${family.type}`)
      if (family.type === 'histogram') {
        for (const key of [...family.samples.keys()].sort()) {
          const sample = family.samples.get(key)
          if (sample?.shown) renderHistogram(lines, name, family.buckets, sample)
        }
        continue
      }
      for (const key of [...family.samples.keys()].sort()) {
        const sample = family.samples.get(key)
        if (sample?.shown) lines.push(`${name}${key} ${formatNumber(sample.value)}`)
      }
    }
    return lines.length ? `${lines.join('\n')}\n` : ''
  }
}

function anyShown(samples: Iterable<{ shown: boolean }>): boolean {
  for (const sample of samples) if (sample.shown) return true
  return false
}

function renderHistogram(lines: string[], name: string, buckets: readonly number[], sample: HistogramSample): void {
  let cumulative = 0
  buckets.forEach((bound, i) => {
    cumulative += sample.counts[i] ?? 0
    lines.push(`${name}_bucket${labelText(sample.labels, `le="${formatNumber(bound)}"`)} ${cumulative}`)
  })
  lines.push(`${name}_bucket${labelText(sample.labels, 'le="+Inf"')} ${sample.count}`)
  lines.push(`${name}_sum${labelText(sample.labels)} ${formatNumber(sample.sum)}`)
  lines.push(`${name}_count${labelText(sample.labels)} ${sample.count}`)
}

/** Prometheus' ExponentialBuckets: `count` bounds from `start`, each `factor` times the one before. */
export function exponentialBuckets(start: number, factor: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => start * factor ** i)
}

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'
