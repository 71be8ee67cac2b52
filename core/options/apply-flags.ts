/**
 * The flags' values onto ApiServerOptions in one step (upstream's `ApplyTo`):
 * everything a flag decides by itself, without a file, a socket or a
 * runtime. A runtime starts from these options and adds only what it loaded
 * (static tokens, CA bundles, keys, config files, clients), so a new flag
 * is one entry in the table (flags/table/) and one line here.
 */
import type { AuthenticationOptions } from '../authn/authentication-options.js'
import type { EmulationOptions } from '../resources/emulation.js'
import { parseWatchCacheSizes } from '../storage/watch-cache-sizes.js'
import type { ApiServerOptions } from './api-server-options.js'
import { authorizationModes, featureEnabled, type FlagValues } from './flags/index.js'
import { parseBool } from './flags/values.js'
import { KUBE_COMPONENT } from './flags/versions.js'

/** Blank means unset for the optional text flags. */
const given = (value: string): string | undefined => (value === '' ? undefined : value)

/** What `--emulated-version` asks for; the flag rules have checked the versions (spec "Errors" 4 and 5). */
function emulationOptions(values: FlagValues): EmulationOptions | undefined {
  const emulated = values['emulated-version'][KUBE_COMPONENT]
  if (!emulated) return undefined
  const minCompatibility = values['min-compatibility-version'][KUBE_COMPONENT]
  return {
    emulated,
    ...(minCompatibility ? { minCompatibility } : {}),
    runtimeConfigForwardCompatible: values['runtime-config-emulation-forward-compatible'],
  }
}

/** `--runtime-config` pairs: an empty value means true, as upstream reads it. */
function runtimeConfig(pairs: Readonly<Record<string, string>>): Record<string, boolean> {
  return Object.fromEntries(
    Object.entries(pairs).map(([key, value]) => {
      const parsed = value === '' ? { value: true } : parseBool(value)
      return [key, 'value' in parsed ? parsed.value : true]
    }),
  )
}

/** `--kvstore-prefix` as the root every key starts with: one leading slash, none trailing. */
export function storageRoot(values: Pick<FlagValues, 'kvstore-prefix'>): string {
  const prefix = values['kvstore-prefix'].replace(/\/+$/, '')
  return prefix.startsWith('/') || prefix === '' ? prefix : `/${prefix}`
}

/** `--event-ttl` for the embedded store, which expires nothing itself; on etcd, the runtime's leases expire events. */
export function eventExpiry(values: Pick<FlagValues, 'kvstore-servers' | 'event-ttl'>): { eventTtlMs?: number } {
  return values['kvstore-servers'].length > 0 ? {} : { eventTtlMs: values['event-ttl'] }
}

/** The host a local admin reaches the server at. */
export function localHost(bindAddress: string): string {
  return bindAddress === '0.0.0.0' || bindAddress === '::' ? '127.0.0.1' : bindAddress
}

/**
 * The authentication flags: anonymous requests, client certificates, the
 * service-account token settings, audiences, bootstrap tokens and the
 * authenticating proxy's headers (set only with its CA file, as upstream
 * ignores the other `--requestheader-*` flags without it; the runtime adds
 * the bundle it read).
 */
function authenticationOptions(values: FlagValues): AuthenticationOptions {
  const jwksUri = given(values['service-account-jwks-uri'])
  return {
    clientCertificates: true,
    anonymous: values['anonymous-auth'],
    ...(given(values['requestheader-client-ca-file'])
      ? {
          requestHeader: {
            usernameHeaders: values['requestheader-username-headers'],
            groupHeaders: values['requestheader-group-headers'],
            uidHeaders: values['requestheader-uid-headers'],
            extraHeaderPrefixes: values['requestheader-extra-headers-prefix'],
            allowedNames: values['requestheader-allowed-names'],
          },
        }
      : {}),
    serviceAccounts: {
      ...(values['service-account-issuer'].length ? { issuers: values['service-account-issuer'] } : {}),
      maxExpirationSeconds: Math.floor(values['service-account-max-token-expiration'] / 1000),
      extendExpiration: values['service-account-extend-token-expiration'],
      lookup: values['service-account-lookup'],
      ...(jwksUri ? { jwksUri } : {}),
    },
    ...(values['api-audiences'].length ? { apiAudiences: values['api-audiences'] } : {}),
    bootstrapTokens: values['enable-bootstrap-token-auth'],
  }
}

/** ApiServerOptions from the flags' values alone. */
export function applyFlags(values: FlagValues): ApiServerOptions {
  const emulation = emulationOptions(values)
  const externalHostname = given(values['external-hostname'])
  const showHiddenForVersion = values['show-hidden-metrics-for-version']
  return {
    authentication: authenticationOptions(values),
    authorizationModes: authorizationModes(values),
    // As upstream, whatever the authorizers: a later switch to RBAC finds the policy in place.
    bootstrapRbacPolicy: true,
    aggregation: {
      enableAggregatorRouting: values['enable-aggregator-routing'],
      rejectForwardingRedirect: values['aggregator-reject-forwarding-redirect'],
    },
    version: values.version,
    ...(emulation ? { emulation } : {}),
    requestTimeoutMs: values['request-timeout'],
    minRequestTimeoutSeconds: values['min-request-timeout'],
    watchCache: values['watch-cache'],
    watchCacheSizes: parseWatchCacheSizes(values['watch-cache-sizes']),
    runtimeConfig: runtimeConfig(values['runtime-config']),
    storagePrefix: storageRoot(values),
    storageObjectCountPollMs: values['kvstore-count-metric-poll-period'],
    storageSizePollMs: values['kvstore-db-metric-poll-interval'],
    allowPrivileged: values['allow-privileged'],
    serviceClusterIPRange: values['service-cluster-ip-range'].map((c) => `${c.network}/${c.prefix}`),
    serviceNodePortRange: values['service-node-port-range'] ?? { first: 30000, last: 32767 },
    platformServiceNodePort: values['platform-service-node-port'],
    // The flag's rules have checked the value.
    endpointReconcilerType: values['endpoint-reconciler-type'] as NonNullable<ApiServerOptions['endpointReconcilerType']>,
    garbageCollector: values['enable-garbage-collector'],
    ...(values.controllers.length ? { controllers: values.controllers } : {}),
    ...(values['simulated-nodes'] > 0 ? { nodes: values['simulated-nodes'] } : {}),
    deleteCollectionWorkers: values['delete-collection-workers'],
    serving: {
      maxInFlight: { readOnly: values['max-requests-inflight'], mutating: values['max-mutating-requests-inflight'] },
      priorityAndFairness: values['enable-priority-and-fairness'],
      livezGracePeriodMs: values['livez-grace-period'],
      hstsDirectives: values['strict-transport-security-directives'],
      corsAllowedOrigins: values['cors-allowed-origins'],
      shutdownSendRetryAfter: values['shutdown-send-retry-after'],
      profiling: values.profiling,
      responseCompression: featureEnabled(values, 'APIResponseCompression'),
    },
    // The address behind the cluster Service: the advertised one, else the bind address when it is one.
    advertiseAddress: given(values['advertise-address']) ?? localHost(values['bind-address'] || '0.0.0.0'),
    ...(externalHostname ? { externalHostname } : {}),
    ...(values['secure-port'] ? { securePort: values['secure-port'] } : {}),
    ...eventExpiry(values),
    metrics: {
      disabled: values['disabled-metrics'],
      allowLabels: values['allow-metric-labels'],
      ...(showHiddenForVersion ? { showHiddenForVersion } : {}),
    },
  }
}
