/**
 * The daemon's start-up template (core/storage/stored-startup-template.ts):
 * on an empty etcd or embedded store, a start writes what an earlier start
 * with the same settings stored, instead of making each object anew.
 *
 * The settings are the flags, but for those that differ from one start to
 * the next while changing nothing a template keeps: where the server
 * listens and what it serves with, the certificates and keys it reads,
 * where the store is. envtest, for one, gives every start a new port, new
 * certificates in a new directory and a new etcd. The flags naming
 * configuration files count by the files' contents.
 *
 * Starts that write more than a fixed set of objects at start, or that
 * would put them in a template readably, have none: encryption at rest (a
 * template would hold in the clear what is to be stored encrypted), the
 * storage overrides, the workers of `--workers`, controllers and simulated
 * nodes.
 */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { Logger } from '../../../core/logging/logger.js'
import { beginStoredStartup, type StoredStartup } from '../../../core/storage/stored-startup-template.js'
import { storageRoot } from '../../../core/options/apply-flags.js'
import type { FlagName, FlagValues } from '../../../core/options/flags/index.js'
import type { StartupTemplateFiles } from '../../../core/ports.js'
import type { DaemonStorage } from '../storage/open.js'

/** Flags whose values a start may change without changing what a template keeps (each server writes what they decide itself). */
export const PER_START_FLAGS: ReadonlySet<FlagName> = new Set<FlagName>([
  'advertise-address',
  'audit-log-path',
  'bind-address',
  'cert-dir',
  'client-ca-file',
  'data-dir',
  'debug-socket-path',
  'external-hostname',
  'kvstore-cafile',
  'kvstore-certfile',
  'kvstore-keyfile',
  'kvstore-servers',
  'peer-advertise-ip',
  'peer-advertise-port',
  'requestheader-allowed-names',
  'requestheader-client-ca-file',
  'requestheader-extra-headers-prefix',
  'requestheader-group-headers',
  'requestheader-uid-headers',
  'requestheader-username-headers',
  'secure-port',
  'service-account-issuer',
  'service-account-jwks-uri',
  'service-account-key-file',
  'service-account-signing-key-file',
  'tls-cert-file',
  'tls-private-key-file',
  'tls-sni-cert-key',
])

/** Flags naming a configuration file: a template is kept per contents of the file. */
export const CONTENT_FLAGS: ReadonlySet<FlagName> = new Set<FlagName>([
  'admission-control-config-file',
  'allow-metric-labels-manifest',
  'audit-policy-file',
  'audit-webhook-config-file',
  'authentication-config',
  'authentication-token-webhook-config-file',
  'authorization-config',
  'authorization-policy-file',
  'authorization-webhook-config-file',
  'egress-selector-config-file',
  'token-auth-file',
  'tracing-config-file',
])

/**
 * The settings a start's template is kept under, as text; undefined when
 * this start has none (see above), or a configuration file cannot be read
 * (start-up says so for the files it needs).
 */
export function startupTemplateKey(values: FlagValues): string | undefined {
  if (values['encryption-provider-config'] || values['kvstore-servers-overrides'].length > 0 || values['workers'] > 1) return undefined
  if (values['controllers'].length > 0 || values['simulated-nodes']) return undefined
  const settings: Record<string, unknown> = {}
  try {
    for (const [name, value] of Object.entries(values) as [FlagName, unknown][]) {
      if (PER_START_FLAGS.has(name)) continue
      settings[name] = CONTENT_FLAGS.has(name) && typeof value === 'string' && value !== '' ? { sha256: createHash('sha256').update(readFileSync(value)).digest('hex') } : value
    }
  } catch {
    return undefined
  }
  return JSON.stringify(settings, (_, value: unknown) => (value instanceof Map ? [...value] : value instanceof Set ? [...value] : value))
}

/**
 * Begins the daemon's storage from the template of its settings when the
 * store is empty and one is kept (`storage.factory` as the server is to
 * store through, and `startupDone` once it is ready); as it is otherwise.
 */
export async function beginDaemonStartup(
  storage: DaemonStorage,
  values: FlagValues,
  { files, logger, worker }: { files: StartupTemplateFiles | undefined; logger: Logger; worker: boolean },
): Promise<StoredStartup> {
  const key = files && !worker ? startupTemplateKey(values) : undefined
  if (!files || key === undefined) return { factory: storage.factory, written: 0, whole: false, startupDone: async () => async () => {} }
  const startup = await beginStoredStartup({
    storage: storage.storage,
    factory: storage.factory,
    root: storageRoot(values),
    files,
    key,
    startedAt: performance.timeOrigin,
    now: () => new Date(),
    logger,
  })
  if (startup.written > 0) logger.info({ objects: startup.written }, 'the empty store was given the objects an earlier start with these settings wrote at start-up')
  return startup
}
