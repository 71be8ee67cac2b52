/** How figures read in docs/benchmarks.md: the same units and rounding in every table. */
import type { LoadResult } from './load.js'

export const ms = (value: number): string => `${Math.abs(value) < 10 ? value.toFixed(2) : value.toFixed(1)} ms`

/** A rate with its latencies: `**1,234/s** (p50 …, p99 …, n=…)`. */
export const rate = (r: LoadResult): string =>
  `**${Math.round(r.perSecond).toLocaleString('en-US')}/s** (p50 ${ms(r.p50Ms)}, p99 ${ms(r.p99Ms)}, n=${r.count}${errorsNote(r)})`

/** One operation at a time, its latency: `**12.3 ms** p50 (p99 …, n=…)`. */
export const latency = (r: LoadResult): string => `**${ms(r.p50Ms)}** p50 (p99 ${ms(r.p99Ms)}, n=${r.count}${errorsNote(r)})`

export const ratio = (a: number, b: number): string => `${(a / b).toFixed(1)}×`

const errorsNote = (r: LoadResult): string => (r.errors ? `, ${r.errors} errors` : '')

/** A Markdown table's lines: the head, its rule, a line per row of cells. */
export const tableLines = (head: readonly string[], rows: readonly (readonly string[])[]): string[] => [
  `| ${head.join(' | ')} |`,
  `| ${head.map(() => '---').join(' | ')} |`,
  ...rows.map((cells) => `| ${cells.join(' | ')} |`),
]
