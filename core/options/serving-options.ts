/**
 * Serving and lifecycle options of createApiServer (spec: "Serving and
 * networking", "States and transitions", "Limits"), kept apart from the
 * rest of ApiServerOptions because the daemon fills them from one group of flags.
 */
export interface ServingOptions {
  /**
   * In-flight limits of the max-in-flight filter (`--max-requests-inflight`,
   * `--max-mutating-requests-inflight`); 0 turns a pool off. Enforced only
   * while priority and fairness is off (`priorityAndFairness: false`).
   * @default { readOnly: 400, mutating: 200 }
   */
  maxInFlight?: { readOnly: number; mutating: number }
  /**
   * `--enable-priority-and-fairness`. Priority and fairness itself is not
   * built yet: while it is on, requests are not limited at all.
   * @default true
   */
  priorityAndFairness?: boolean
  /**
   * `--livez-grace-period`, in ms: until this long after start, `/livez`
   * counts unfinished post-start hooks as healthy. @default 0
   */
  livezGracePeriodMs?: number
  /** `--strict-transport-security-directives`: an HSTS header on every answer when not empty. @default [] */
  hstsDirectives?: readonly string[]
  /** `--cors-allowed-origins`: RE2 patterns of the origins allowed CORS; empty turns CORS off. @default [] */
  corsAllowedOrigins?: readonly string[]
  /**
   * `--shutdown-send-retry-after`: once the shutdown delay is over, new
   * requests get 429 with Retry-After and `Connection: close` (instead of
   * the listener closing) until the requests in flight are done. @default false
   */
  shutdownSendRetryAfter?: boolean
  /**
   * `--profiling`: serve `/debug/pprof/` (CPU and heap profiles in pprof's
   * format) when the runtime supplies a profiler port.
   * @default true
   */
  profiling?: boolean
  /**
   * The APIResponseCompression feature gate: an API answer of more than
   * 128 KiB is sent gzip-compressed to a client whose `Accept-Encoding`
   * names gzip, as upstream's serializer writes it (core/http/filters/compression.ts).
   * @default true
   */
  responseCompression?: boolean
}
