/**
 * What the operator's metrics flags change (upstream's component-base
 * metrics options): `--disabled-metrics`, `--allow-metric-labels` (and its
 * manifest), and the hiding of deprecated metrics that
 * `--show-hidden-metrics-for-version` lifts for one release.
 */

export interface MetricsFilterOptions {
  /** `--disabled-metrics`: families never recorded nor served. */
  disabled?: readonly string[]
  /** `--allow-metric-labels`: `"<metric>,<label>"` to the values kept; any other value is recorded as `unexpected`. */
  allowLabels?: Readonly<Record<string, readonly string[]>>
  /** `--show-hidden-metrics-for-version`, `<major>.<minor>`: deprecated metrics hidden since that release are shown. */
  showHiddenForVersion?: string
  /** The server's release, `<major>.<minor>`. @default '1.32' */
  version?: string
  /** Metric to the release that deprecated it. @default DEPRECATED_METRICS */
  deprecated?: Readonly<Record<string, string>>
}

/**
 * The metrics this server knows that upstream deprecated, with the release
 * that did it. `apiserver_registered_watchers` (1.23) and
 * `apiserver_dropped_requests_total` (1.24; apiserver_request_total counts
 * the 429s) are gone from 1.32's scrape, so they are hidden here too (the
 * flag only shows the previous release's); a later release's deprecations
 * go here.
 */
export const DEPRECATED_METRICS: Readonly<Record<string, string>> = {
  apiserver_registered_watchers: '1.23',
  apiserver_dropped_requests_total: '1.24',
}

/** What a value outside a label's allow-list is recorded as (upstream's word). */
export const UNEXPECTED_LABEL_VALUE = 'unexpected'

function minorOf(version: string): [number, number] | undefined {
  const m = /^v?(\d+)\.(\d+)/.exec(version)
  return m ? [Number(m[1]), Number(m[2])] : undefined
}

/** True when `a` is an earlier release than `b`, both `<major>.<minor>`. */
function before(a: [number, number], b: [number, number]): boolean {
  return a[0] < b[0] || (a[0] === b[0] && a[1] < b[1])
}

export class MetricsFilters {
  private readonly disabled: ReadonlySet<string>
  /** metric -> label -> allowed values. */
  private readonly allowed = new Map<string, Map<string, ReadonlySet<string>>>()
  private readonly version: [number, number]
  private readonly showHidden: [number, number] | undefined
  private readonly deprecated: Readonly<Record<string, string>>
  private readonly shownCache = new Map<string, boolean>()

  constructor(options: MetricsFilterOptions) {
    this.disabled = new Set(options.disabled ?? [])
    for (const [key, values] of Object.entries(options.allowLabels ?? {})) {
      const [metric = '', label = ''] = key.split(',').map((s) => s.trim())
      let labels = this.allowed.get(metric)
      if (!labels) this.allowed.set(metric, (labels = new Map()))
      labels.set(label, new Set(values))
    }
    this.version = minorOf(options.version ?? '1.32') ?? [1, 32]
    this.showHidden = options.showHiddenForVersion ? minorOf(options.showHiddenForVersion) : undefined
    this.deprecated = options.deprecated ?? DEPRECATED_METRICS
  }

  /** Whether a family is recorded and served: not disabled, and not hidden for its deprecation. */
  shown(name: string): boolean {
    let shown = this.shownCache.get(name)
    if (shown === undefined) {
      shown = !this.disabled.has(name) && !this.hidden(name)
      this.shownCache.set(name, shown)
    }
    return shown
  }

  /**
   * A metric deprecated in an earlier release than the server's is hidden;
   * naming that release (only the previous one passes the flag's check)
   * shows it again.
   */
  private hidden(name: string): boolean {
    const deprecatedIn = this.deprecated[name]
    const release = deprecatedIn ? minorOf(deprecatedIn) : undefined
    if (!release || !before(release, this.version)) return false
    return !(this.showHidden && this.showHidden[0] === release[0] && this.showHidden[1] === release[1])
  }

  /** The labels with every value outside its allow-list replaced by `unexpected`. */
  constrain(name: string, labels: Readonly<Record<string, string>>): Readonly<Record<string, string>> {
    const lists = this.allowed.get(name)
    if (!lists) return labels
    let out: Record<string, string> | undefined
    for (const [label, values] of lists) {
      const value = labels[label]
      if (value === undefined || values.has(value)) continue
      out ??= { ...labels }
      out[label] = UNEXPECTED_LABEL_VALUE
    }
    return out ?? labels
  }

  /** The HELP text, marked with its deprecation as upstream marks a deprecated metric still shown. */
  help(name: string, help: string): string {
    const deprecatedIn = this.deprecated[name]
    if (!deprecatedIn) return help
    const stability = /^\[(ALPHA|BETA|STABLE)\] /.exec(help)
    const rest = stability ? help.slice(stability[0].length) : help
    return `${stability ? stability[0] : ''}(Deprecated since ${deprecatedIn}.0) ${rest}`
  }
}
