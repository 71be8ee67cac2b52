/**
 * The service-account token counters kube-apiserver 1.32 registers
 * (upstream's pkg/serviceaccount/metrics.go): shown from the start, at zero.
 * The help texts are this server's own words.
 */

/** A counter's name and help text, as the server's metrics take them. */
interface CounterDefinition {
  readonly name: string
  readonly help: string
}

/** Tokens without audiences (legacy ones) presented with a valid signature, whatever came of them after. */
export const LEGACY_TOKENS: CounterDefinition = {
  name: 'serviceaccount_legacy_tokens_total',
  help: '[ALPHA] Legacy service-account tokens presented with a valid signature.',
}
/** Legacy tokens taken whose Secret the service account lists (the token controller made them). */
export const LEGACY_AUTO_TOKEN_USES: CounterDefinition = {
  name: 'serviceaccount_legacy_auto_token_uses_total',
  help: '[ALPHA] Uses of auto-generated legacy service-account tokens.',
}
/** Legacy tokens taken whose Secret the service account does not list (made by hand). */
export const LEGACY_MANUAL_TOKEN_USES: CounterDefinition = {
  name: 'serviceaccount_legacy_manual_token_uses_total',
  help: '[ALPHA] Uses of manually created legacy service-account tokens.',
}
/** Legacy tokens refused because their Secret is marked invalid. */
export const INVALID_LEGACY_AUTO_TOKEN_USES: CounterDefinition = {
  name: 'serviceaccount_invalid_legacy_auto_token_uses_total',
  help: '[ALPHA] Uses of auto-generated legacy service-account tokens marked invalid.',
}

export const LEGACY_TOKEN_COUNTERS = [LEGACY_TOKENS, LEGACY_AUTO_TOKEN_USES, LEGACY_MANUAL_TOKEN_USES, INVALID_LEGACY_AUTO_TOKEN_USES]
