/** One named check of `/healthz`, `/livez` or `/readyz`; any layer may contribute one (storage, encryption, hooks). */
export interface HealthCheck {
  name: string
  /** Resolves when healthy; throws (with the reason) when not. */
  check: () => Promise<void> | void
}
