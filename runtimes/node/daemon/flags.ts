/**
 * The daemon's command line: core's flag table (core/options/flags) parsed
 * and checked, then split in two: what core's server takes, mapped in one
 * step by core (applyFlags, core/options/apply-flags.ts), and what the
 * daemon itself acts on (the listener, the files it reads, shutdown),
 * gathered here. Everything about syntax, defaults, rules and `--help`
 * lives in the table.
 */
import type { ApiServerOptions } from '../../../core/options/api-server-options.js'
import { applyFlags } from '../../../core/options/apply-flags.js'
import { DEFAULT_CERT_DIR, FlagError, helpText, type ParsedFlags, readCommandLine } from '../../../core/options/flags/index.js'
import type { NamedCertKey } from '../../../core/options/flags/lists.js'

export { DEFAULT_CERT_DIR, FlagError, helpText }

/** The flags the daemon acts on itself; the rest reach core's server as ApiServerOptions. */
export interface DaemonFlags {
  securePort: number
  bindAddress: string
  advertiseAddress?: string
  certDir: string
  tlsCertFile?: string
  tlsPrivateKeyFile?: string
  clientCaFile?: string
  tokenAuthFile?: string
  /** `--requestheader-client-ca-file`, read by the daemon; the proxy's headers are core's options. */
  requestHeader: { clientCaFile?: string }
  /** The service-account key files and signer, read or dialled by the daemon; the token settings are core's options. */
  serviceAccounts: {
    keyFiles: string[]
    signingKeyFile?: string
    /** `--service-account-signing-endpoint`: the socket of an external signer. */
    signingEndpoint?: string
  }
  dataDir?: string
  storageBackend?: 'kvstore3' | 'etcd3'
  disableHttp2Serving: boolean
  /** `--max-connection-bytes-per-sec`: the per-direction rate of exec, attach and port-forward streams; 0 is unlimited. */
  maxConnectionBytesPerSec: number
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

export type CommandLine =
  | { action: 'help' }
  | { action: 'version'; raw: boolean; version: string }
  /**
   * `parsed` holds every flag's value and which flags were given (for
   * warnings and config files); `options` what they make of core's options.
   */
  | { action: 'run'; flags: DaemonFlags; options: ApiServerOptions; parsed: ParsedFlags }

/** Blank means unset for the daemon's optional file and address flags. */
const given = (value: string): string | undefined => (value === '' ? undefined : value)

export function daemonFlags({ values }: ParsedFlags): DaemonFlags {
  const backend = values['storage-backend']
  const tlsCertFile = given(values['tls-cert-file'])
  const tlsPrivateKeyFile = given(values['tls-private-key-file'])
  const optional = {
    advertiseAddress: given(values['advertise-address']),
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
    serviceAccounts: {
      keyFiles: values['service-account-key-file'],
      ...(given(values['service-account-signing-key-file']) ? { signingKeyFile: values['service-account-signing-key-file'] } : {}),
      ...(given(values['service-account-signing-endpoint']) ? { signingEndpoint: values['service-account-signing-endpoint'] } : {}),
    },
    requestHeader: {
      ...(given(values['requestheader-client-ca-file']) ? { clientCaFile: values['requestheader-client-ca-file'] } : {}),
    },
    disableHttp2Serving: values['disable-http2-serving'],
    maxConnectionBytesPerSec: values['max-connection-bytes-per-sec'],
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
  return { action: 'run', flags: daemonFlags(command.flags), options: applyFlags(command.flags.values), parsed: command.flags }
}
