/**
 * The token cache's metrics, with upstream's names, labels and buckets
 * (component-base's token cache stats). The help texts are this server's own
 * words. The cache sees the server's metrics only through
 * `TokenCacheMetrics`, which core/metrics' registry is: metrics imports
 * authentication's types, so authentication imports nothing of it.
 */

interface Definition {
  readonly name: string
  readonly help: string
}

export interface TokenCacheMetrics {
  counter(name: string, help: string, labels: Record<string, string>): { add(by?: number): void }
  histogram(name: string, help: string, buckets: readonly number[], labels: Record<string, string>): { observe(value: number): void }
  gauge(name: string, help: string, labels: Record<string, string>): { add(by: number): void }
}

/** Prometheus' default buckets, which upstream's histogram keeps. */
export const TOKEN_CACHE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

export const TOKEN_CACHE_REQUESTS: Definition = {
  name: 'authentication_token_cache_request_total',
  help: '[ALPHA] Bearer tokens looked up in the token cache, by status (hit or miss).',
}
export const TOKEN_CACHE_REQUEST_DURATION: Definition = {
  name: 'authentication_token_cache_request_duration_seconds',
  help: '[ALPHA] Time to answer a bearer token through the token cache in seconds (whole milliseconds), by status (hit or miss).',
}
export const TOKEN_CACHE_FETCHES: Definition = {
  name: 'authentication_token_cache_fetch_total',
  help: '[ALPHA] Bearer tokens the token cache asked the authenticators about, by status (ok or error).',
}
export const TOKEN_CACHE_ACTIVE_FETCHES: Definition = {
  name: 'authentication_token_cache_active_fetch_count',
  help: '[ALPHA] Token cache lookups under way (in_flight) and requests waiting for one (blocked).',
}
