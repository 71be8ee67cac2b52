/**
 * The Node process's metrics, from prom-client's default collectors
 * (`process_*` as every Prometheus client names them, and `nodejs_*`: event
 * loop lag, heap spaces, garbage collection, handles), in a registry of
 * their own that `/metrics` appends to the server's. `--disabled-metrics`
 * applies to them too.
 */
import { readFile } from 'node:fs/promises'
import { collectDefaultMetrics, Registry } from 'prom-client'
import { parse as parseYaml } from 'yaml'
import type { RuntimeMetrics } from '../../core/ports.js'

export function nodeRuntimeMetrics(disabled: readonly string[] = []): RuntimeMetrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  for (const name of disabled) registry.removeSingleMetric(name)
  return { render: () => registry.metrics() }
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
