/**
 * The server's metrics, served at `/metrics` in the Prometheus text format
 * upstream's component-base writes: gauges, set by the part of the server
 * that knows the figure, and counters, added to as things happen.
 */

type Labels = Readonly<Record<string, string>>

interface Family {
  help: string
  type: 'gauge' | 'counter'
  samples: Map<string, { labels: Labels; value: number }>
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')
}

function labelText(labels: Labels): string {
  const pairs = Object.keys(labels)
    .sort()
    .map((k) => `${k}="${escapeLabel(labels[k] ?? '')}"`)
  return pairs.length ? `{${pairs.join(',')}}` : ''
}

export class Metrics {
  private readonly families = new Map<string, Family>()

  setGauge(name: string, help: string, labels: Labels, value: number): void {
    this.sample(name, help, 'gauge', labels).value = value
  }

  /** Adds `by` (default 1) to a counter's sample; a new sample starts at 0. */
  addCounter(name: string, help: string, labels: Labels, by = 1): void {
    this.sample(name, help, 'counter', labels).value += by
  }

  /** A gauge's sample to set again and again without finding it each time (a hot path's gauge). */
  gauge(name: string, help: string, labels: Labels): { set(value: number): void } {
    const sample = this.sample(name, help, 'gauge', labels)
    return { set: (value) => void (sample.value = value) }
  }

  /** A counter's sample to add to again and again without finding it each time (a hot path's counter). */
  counter(name: string, help: string, labels: Labels): { add(by?: number): void } {
    const sample = this.sample(name, help, 'counter', labels)
    return { add: (by = 1) => void (sample.value += by) }
  }

  /** The current value of a sample, or undefined when it was never set. */
  value(name: string, labels: Labels): number | undefined {
    return this.families.get(name)?.samples.get(labelText(labels))?.value
  }

  private sample(name: string, help: string, type: Family['type'], labels: Labels): { labels: Labels; value: number } {
    let family = this.families.get(name)
    if (!family) {
      family = { help, type, samples: new Map() }
      this.families.set(name, family)
    }
    const key = labelText(labels)
    let sample = family.samples.get(key)
    if (!sample) {
      sample = { labels, value: 0 }
      family.samples.set(key, sample)
    }
    return sample
  }

  /** The exposition text: `# HELP`, `# TYPE`, then one line per sample, names and labels sorted. */
  render(): string {
    const lines: string[] = []
    for (const name of [...this.families.keys()].sort()) {
      const family = this.families.get(name)
      if (!family) continue
      lines.push(`# HELP ${name} ${family.help}`, `# TYPE ${name} ${family.type}`)
      for (const key of [...family.samples.keys()].sort()) lines.push(`${name}${key} ${family.samples.get(key)?.value ?? 0}`)
    }
    return lines.length ? `${lines.join('\n')}\n` : ''
  }
}

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'
