/**
 * The server's metrics, served at `/metrics` in the Prometheus text format
 * upstream's component-base writes. Only gauges exist so far; each sample is
 * set by the part of the server that knows the figure.
 */

type Labels = Readonly<Record<string, string>>

interface Gauge {
  help: string
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
  private readonly gauges = new Map<string, Gauge>()

  setGauge(name: string, help: string, labels: Labels, value: number): void {
    let gauge = this.gauges.get(name)
    if (!gauge) {
      gauge = { help, samples: new Map() }
      this.gauges.set(name, gauge)
    }
    gauge.samples.set(labelText(labels), { labels, value })
  }

  /** The exposition text: `# HELP`, `# TYPE`, then one line per sample, names and labels sorted. */
  render(): string {
    const lines: string[] = []
    for (const name of [...this.gauges.keys()].sort()) {
      const gauge = this.gauges.get(name)
      if (!gauge) continue
      lines.push(`# HELP ${name} ${gauge.help}`, `# TYPE ${name} gauge`)
      for (const key of [...gauge.samples.keys()].sort()) lines.push(`${name}${key} ${gauge.samples.get(key)?.value ?? 0}`)
    }
    return lines.length ? `${lines.join('\n')}\n` : ''
  }
}

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'
