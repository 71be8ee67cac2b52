/**
 * The daemon's command line: core's flag table (core/options/flags) parsed
 * and checked, then mapped onto what the daemon acts on today. Everything
 * about syntax, defaults, rules and `--help` lives in the table.
 */
import type { EmulationOptions } from '../../../core/resources/emulation.js'
import { KUBE_COMPONENT } from '../../../core/options/flags/versions.js'
import { authorizationModes, DEFAULT_CERT_DIR, FlagError, type FlagValues, helpText, type ParsedFlags, readCommandLine } from '../../../core/options/flags/index.js'
import { parseBool } from '../../../core/options/flags/values.js'
import type { NamedCertKey } from '../../../core/options/flags/lists.js'
import type { ServingOptions } from '../../../core/options/serving-options.js'
import { parseWatchCacheSizes } from '../../../core/storage/watch-cache-sizes.js'
import { storageRoot } from '../storage/open.js'

export { DEFAULT_CERT_DIR, FlagError, helpText }

export interface DaemonFlags {
  securePort: number
  bindAddress: string
  advertiseAddress?: string
  externalHostname?: string
  certDir: string
  tlsCertFile?: string
  tlsPrivateKeyFile?: string
  clientCaFile?: string
  tokenAuthFile?: string
  /** The `--requestheader-*` flags; the proxy is trusted only when `clientCaFile` is given. */
  requestHeader: {
    clientCaFile?: string
    usernameHeaders: string[]
    groupHeaders: string[]
    uidHeaders: string[]
    extraHeaderPrefixes: string[]
    allowedNames: string[]
  }
  anonymousAuth: boolean
  /** The service-account token flags; files are read by the daemon. */
  serviceAccounts: {
    issuers: string[]
    keyFiles: string[]
    signingKeyFile?: string
    /** `--service-account-signing-endpoint`: the socket of an external signer. */
    signingEndpoint?: string
    /** `--service-account-max-token-expiration` in seconds; 0: no cap. */
    maxExpirationSeconds: number
    extendExpiration: boolean
    lookup: boolean
    jwksUri?: string
  }
  /** `--api-audiences`; empty: the issuers. */
  apiAudiences: string[]
  /** `--enable-bootstrap-token-auth`. */
  bootstrapTokens: boolean
  /** `--authorization-mode` in order (AlwaysAllow when none). */
  authorizationModes: string[]
  dataDir?: string
  storageBackend?: 'kvstore3' | 'etcd3'
  requestTimeoutMs: number
  minRequestTimeoutSeconds: number
  disableHttp2Serving: boolean
  /** `--max-connection-bytes-per-sec`: the per-direction rate of exec, attach and port-forward streams; 0 is unlimited. */
  maxConnectionBytesPerSec: number
  watchCache: boolean
  /** `--watch-cache-sizes` as `{ "resource[.group]": size }`. */
  watchCacheSizes: Record<string, number>
  /** `--kvstore-prefix`: where every key starts. */
  storagePrefix: string
  /** `--kvstore-count-metric-poll-period`, in milliseconds. */
  storageObjectCountPollMs: number
  /** `--kvstore-db-metric-poll-interval`, in milliseconds. */
  storageSizePollMs: number
  /** `--runtime-config` as `{ key: enabled }`; the flag rules have checked every value. */
  runtimeConfig: Record<string, boolean>
  /** The version `/version` reports. */
  version: string
  /** `--emulated-version` (kube), `--min-compatibility-version`, `--runtime-config-emulation-forward-compatible`; absent: not given. */
  emulation?: EmulationOptions
  /** `--allow-privileged`: pods may run privileged containers. */
  allowPrivileged: boolean
  /** `--service-cluster-ip-range` as CIDR texts; empty: the default range. */
  serviceClusterIPRange: string[]
  /** `--service-node-port-range`. */
  serviceNodePortRange: { first: number; last: number }
  /** `--platform-service-node-port`: 0 keeps the cluster Service ClusterIP. */
  platformServiceNodePort: number
  /** `--endpoint-reconciler-type`; the flag's rules have checked the value. */
  endpointReconcilerType: 'lease' | 'master-count' | 'none'
  /** `--enable-garbage-collector`. */
  garbageCollector: boolean
  /** `--controllers`: the workload controllers run in process. */
  controllers: string[]
  /** `--simulated-nodes`: how many; 0 for none. */
  simulatedNodes: number
  /** `--delete-collection-workers`. */
  deleteCollectionWorkers: number
  /** In-flight limits, HSTS, CORS, livez grace, profiling, send-retry-after: what core's chain reads. */
  serving: ServingOptions
  /** The phases of graceful shutdown, in ms. */
  shutdown: { delayMs: number; sendRetryAfter: boolean; watchTerminationGraceMs: number }
  /** What the listener is built with. */
  listener: {
    cipherSuites: string[]
    minVersion: string
    sniCertKeys: NamedCertKey[]
    http2MaxStreams: number
    goawayChance: number
    permitPortSharing: boolean
    permitAddressSharing: boolean
  }
  /** `--debug-socket-path`; blank: none. */
  debugSocketPath?: string
}

/** What `--emulated-version` asks for; the flag rules have checked the versions (spec "Errors" 4 and 5). */
function emulationOptions(values: FlagValues): { emulation?: EmulationOptions } {
  const emulated = values['emulated-version'][KUBE_COMPONENT]
  if (!emulated) return {}
  const minCompatibility = values['min-compatibility-version'][KUBE_COMPONENT]
  return {
    emulation: {
      emulated,
      ...(minCompatibility ? { minCompatibility } : {}),
      runtimeConfigForwardCompatible: values['runtime-config-emulation-forward-compatible'],
    },
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

export type CommandLine =
  | { action: 'help' }
  | { action: 'version'; raw: boolean; version: string }
  /** `parsed` holds every flag's value and which flags were given (for warnings and config files). */
  | { action: 'run'; flags: DaemonFlags; parsed: ParsedFlags }

/** Blank means unset for the daemon's optional file and address flags. */
const given = (value: string): string | undefined => (value === '' ? undefined : value)

export function daemonFlags({ values }: ParsedFlags): DaemonFlags {
  const backend = values['storage-backend']
  const tlsCertFile = given(values['tls-cert-file'])
  const tlsPrivateKeyFile = given(values['tls-private-key-file'])
  const optional = {
    advertiseAddress: given(values['advertise-address']),
    externalHostname: given(values['external-hostname']),
    clientCaFile: given(values['client-ca-file']),
    tokenAuthFile: given(values['token-auth-file']),
    dataDir: given(values['data-dir']),
    debugSocketPath: given(values['debug-socket-path']),
    storageBackend: backend === 'kvstore3' || backend === 'etcd3' ? backend : undefined,
    // The rules have made sure the two come together.
    ...(tlsCertFile && tlsPrivateKeyFile ? { tlsCertFile, tlsPrivateKeyFile } : {}),
  }
  return {
    securePort: values['secure-port'],
    bindAddress: values['bind-address'] || '0.0.0.0',
    certDir: values['cert-dir'] || DEFAULT_CERT_DIR,
    anonymousAuth: values['anonymous-auth'],
    serviceAccounts: {
      issuers: values['service-account-issuer'],
      keyFiles: values['service-account-key-file'],
      ...(given(values['service-account-signing-key-file']) ? { signingKeyFile: values['service-account-signing-key-file'] } : {}),
      ...(given(values['service-account-signing-endpoint']) ? { signingEndpoint: values['service-account-signing-endpoint'] } : {}),
      maxExpirationSeconds: Math.floor(values['service-account-max-token-expiration'] / 1000),
      extendExpiration: values['service-account-extend-token-expiration'],
      lookup: values['service-account-lookup'],
      ...(given(values['service-account-jwks-uri']) ? { jwksUri: values['service-account-jwks-uri'] } : {}),
    },
    apiAudiences: values['api-audiences'],
    bootstrapTokens: values['enable-bootstrap-token-auth'],
    requestHeader: {
      ...(given(values['requestheader-client-ca-file']) ? { clientCaFile: values['requestheader-client-ca-file'] } : {}),
      usernameHeaders: values['requestheader-username-headers'],
      groupHeaders: values['requestheader-group-headers'],
      uidHeaders: values['requestheader-uid-headers'],
      extraHeaderPrefixes: values['requestheader-extra-headers-prefix'],
      allowedNames: values['requestheader-allowed-names'],
    },
    authorizationModes: authorizationModes(values),
    requestTimeoutMs: values['request-timeout'],
    minRequestTimeoutSeconds: values['min-request-timeout'],
    disableHttp2Serving: values['disable-http2-serving'],
    maxConnectionBytesPerSec: values['max-connection-bytes-per-sec'],
    watchCache: values['watch-cache'],
    watchCacheSizes: parseWatchCacheSizes(values['watch-cache-sizes']),
    runtimeConfig: runtimeConfig(values['runtime-config']),
    storagePrefix: storageRoot(values),
    storageObjectCountPollMs: values['kvstore-count-metric-poll-period'],
    storageSizePollMs: values['kvstore-db-metric-poll-interval'],
    version: values.version,
    ...emulationOptions(values),
    allowPrivileged: values['allow-privileged'],
    serviceClusterIPRange: values['service-cluster-ip-range'].map((c) => `${c.network}/${c.prefix}`),
    serviceNodePortRange: values['service-node-port-range'] ?? { first: 30000, last: 32767 },
    platformServiceNodePort: values['platform-service-node-port'],
    endpointReconcilerType: values['endpoint-reconciler-type'] as DaemonFlags['endpointReconcilerType'],
    garbageCollector: values['enable-garbage-collector'],
    controllers: values.controllers,
    simulatedNodes: values['simulated-nodes'],
    deleteCollectionWorkers: values['delete-collection-workers'],
    serving: {
      maxInFlight: { readOnly: values['max-requests-inflight'], mutating: values['max-mutating-requests-inflight'] },
      priorityAndFairness: values['enable-priority-and-fairness'],
      livezGracePeriodMs: values['livez-grace-period'],
      hstsDirectives: values['strict-transport-security-directives'],
      corsAllowedOrigins: values['cors-allowed-origins'],
      shutdownSendRetryAfter: values['shutdown-send-retry-after'],
      profiling: values.profiling,
    },
    shutdown: {
      delayMs: values['shutdown-delay-duration'],
      sendRetryAfter: values['shutdown-send-retry-after'],
      watchTerminationGraceMs: values['shutdown-watch-termination-grace-period'],
    },
    listener: {
      cipherSuites: values['tls-cipher-suites'],
      minVersion: values['tls-min-version'],
      sniCertKeys: values['tls-sni-cert-key'],
      http2MaxStreams: values['http2-max-streams-per-connection'],
      goawayChance: values['goaway-chance'],
      permitPortSharing: values['permit-port-sharing'],
      permitAddressSharing: values['permit-address-sharing'],
    },
    ...Object.fromEntries(Object.entries(optional).filter(([, v]) => v !== undefined)),
  }
}

/**
 * Reads argv (without node and script). Throws FlagError for a bad flag or
 * value, and for broken cross-flag rules (all of them at once).
 */
export function parseFlags(argv: readonly string[]): CommandLine {
  const command = readCommandLine(argv)
  if (command.action !== 'run') return command
  return { action: 'run', flags: daemonFlags(command.flags), parsed: command.flags }
}
