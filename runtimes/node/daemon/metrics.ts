/**
 * The Node process's metrics, from prom-client's default collectors
 * (`process_*` as every Prometheus client names them, and `nodejs_*`: event
 * loop lag, heap spaces, garbage collection, handles), in a registry of
 * their own that `/metrics` appends to the server's. `--disabled-metrics`
 * applies to them too.
 */
import { readFile } from 'node:fs/promises'
import type { Registry } from 'prom-client'
import { parse as parseYaml } from 'yaml'
import type { RuntimeMetrics } from '../../../core/ports.js'

export interface NodeRuntimeMetrics extends RuntimeMetrics {
  /** Loads prom-client and starts its collectors (once): the daemon calls it shortly after it is serving, a first scrape otherwise. */
  start(): Promise<unknown>
}

/**
 * prom-client's event-loop monitor samples every 10 ms; until its first
 * sample it reports the lag as NaN, which is no Prometheus value a scraper
 * accepts. A scrape waits this long after the collectors started.
 */
const FIRST_SAMPLE_MS = 25

/**
 * prom-client loads only after start-up (`start`), not before the server
 * answers: the start-up does not wait for what only `/metrics` reads.
 */
export function nodeRuntimeMetrics(disabled: readonly string[] = []): NodeRuntimeMetrics {
  let registry: Promise<{ collected: Registry; startedAt: number }> | undefined
  const start = (): Promise<{ collected: Registry; startedAt: number }> =>
    (registry ??= import('prom-client').then(({ collectDefaultMetrics, Registry }) => {
      const collected = new Registry()
      collectDefaultMetrics({ register: collected })
      for (const name of disabled) collected.removeSingleMetric(name)
      return { collected, startedAt: performance.now() }
    }))
  return {
    start,
    render: async () => {
      const { collected, startedAt } = await start()
      const wait = startedAt + FIRST_SAMPLE_MS - performance.now()
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
      return collected.metrics()
    },
  }
}

/**
 * `--allow-metric-labels-manifest`: a YAML (or JSON) map of
 * `"<metric>,<label>"` to the allowed values, comma separated, as the flag
 * takes them. Throws, naming the file, when it is not such a map.
 */
export async function readAllowListManifest(path: string): Promise<Record<string, string[]>> {
  const text = await readFile(path, 'utf8').catch((err: Error) => {
    throw new Error(`--allow-metric-labels-manifest: cannot read ${path}: ${err.message}`)
  })
  const parsed: unknown = parseYaml(text)
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error(`--allow-metric-labels-manifest: ${path} is not a map of "<metric>,<label>" to allowed values`)
  const out: Record<string, string[]> = {}
  for (const [key, value] of Object.entries(parsed)) {
    if (typeof value !== 'string' || !/^[^,]+,[^,]+$/.test(key)) throw new Error(`--allow-metric-labels-manifest: ${path}: entry ${JSON.stringify(key)} must map "<metric>,<label>" to "value,value..."`)
    out[key] = value === '' ? [] : value.split(',').map((v) => v.trim())
  }
  return out
}
