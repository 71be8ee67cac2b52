/**
 * The daemon's side of authorization: the files the flags name, read into
 * core's options (ABAC rules, the legacy webhook's connection, the
 * AuthorizationConfiguration chain with each webhook's kubeconfig read),
 * and the watch that reloads `--authorization-config` when it changes.
 */
import { readFileSync, unwatchFile, watchFile } from 'node:fs'
import { type AuthorizerSpec, configuredAuthorizerSpecs } from '../../../core/authz/authorizer-specs.js'
import type { WebhookConnection } from '../../../core/authz/webhook.js'
import { type AuthorizerConfiguration, loadAuthorizationConfiguration } from '../../../core/config/authorization.js'
import { type FileOrData, type KubeconfigConnection, loadKubeconfigConnection, unsupportedConnectionSettings } from '../../../core/config/kubeconfig.js'
import type { ApiServerOptions } from '../../../core/options/api-server-options.js'
import type { ParsedFlags } from '../../../core/options/flags/index.js'
import type { Logger } from '../../../core/logging/logger.js'
import type { ConfigFiles } from './config-files.js'

type ConnectionInfo = NonNullable<AuthorizerConfiguration['webhook']>['connectionInfo']

/** Where a pod's service account credentials are mounted (client-go's rest.InClusterConfig). */
const IN_CLUSTER_DIR = '/var/run/secrets/kubernetes.io/serviceaccount'

const pem = (source: FileOrData | undefined): string | undefined =>
  source === undefined ? undefined : 'file' in source ? readFileSync(source.file, 'utf8') : new TextDecoder().decode(source.data)

/** What a kubeconfig's current context says, with the files it names read now. */
export function webhookConnection(c: KubeconfigConnection): WebhookConnection {
  const unsupported = unsupportedConnectionSettings(c)
  if (unsupported) throw new Error(`${unsupported} for an authorization webhook; use a client certificate or a token`)
  const token = c.token ?? (c.tokenFile ? readFileSync(c.tokenFile, 'utf8').trim() : undefined)
  const ca = pem(c.certificateAuthority)
  const cert = pem(c.clientCertificate)
  const key = pem(c.clientKey)
  return {
    url: c.server,
    ...(ca ? { certificateAuthority: ca } : {}),
    ...(cert && key ? { clientCertificate: cert, clientKey: key } : {}),
    ...(c.tlsServerName ? { serverName: c.tlsServerName } : {}),
    ...(token ? { bearerToken: token } : {}),
    ...(c.insecureSkipTLSVerify ? { insecureSkipTLSVerify: true } : {}),
  }
}

/** `connectionInfo.type: InClusterConfig`: the API server of the cluster this one runs in, as its service account. */
function inClusterConnection(): WebhookConnection {
  const host = process.env['KUBERNETES_SERVICE_HOST']
  const port = process.env['KUBERNETES_SERVICE_PORT']
  if (!host || !port) throw new Error('unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined')
  const hostPort = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`
  return {
    url: `https://${hostPort}`,
    certificateAuthority: readFileSync(`${IN_CLUSTER_DIR}/ca.crt`, 'utf8'),
    bearerToken: readFileSync(`${IN_CLUSTER_DIR}/token`, 'utf8').trim(),
  }
}

function connectionOf(info: ConnectionInfo): WebhookConnection {
  if (info.type === 'InClusterConfig') return inClusterConnection()
  const path = info.platformConfigFile ?? info.kubeConfigFile ?? ''
  return webhookConnection(loadKubeconfigConnection(readFileSync(path, 'utf8'), path))
}

/** Reads and checks an AuthorizationConfiguration and every kubeconfig it names; throws, saying what is wrong. */
export function readAuthorizationConfig(path: string, text: string = readFileSync(path, 'utf8')): AuthorizerSpec[] {
  return configuredAuthorizerSpecs(loadAuthorizationConfiguration(text, path), connectionOf)
}

/** The authorization part of core's options, from the flags and the files already validated at load. */
export function authorizationOptions(files: ConfigFiles, parsed: ParsedFlags): Partial<ApiServerOptions> {
  const { values } = parsed
  const options: Partial<ApiServerOptions> = {}
  if (files.abacPolicy) options.authorizationPolicy = files.abacPolicy
  if (files.authorizationWebhook) {
    options.authorizationWebhook = {
      connection: webhookConnection(files.authorizationWebhook),
      version: values['authorization-webhook-version'] === 'v1' ? 'v1' : 'v1beta1',
      authorizedTTLMs: values['authorization-webhook-cache-authorized-ttl'],
      unauthorizedTTLMs: values['authorization-webhook-cache-unauthorized-ttl'],
    }
  }
  const configPath = values['authorization-config']
  if (configPath) {
    const specs = readAuthorizationConfig(configPath)
    // The rules of an ABAC authorizer come from the flag alone; without it the chain cannot be built.
    const abac = specs.findIndex((spec) => spec.type === 'ABAC')
    if (abac >= 0 && !files.abacPolicy) throw new Error(`authorizers[${abac}].type: ABAC's authorization policy file not passed (--authorization-policy-file)`)
    options.authorizationConfiguration = specs
  }
  return options
}

/** How often the file's status is looked at; upstream re-reads its file about once a minute. */
const POLL_MS = 1000

/**
 * Reloads the chain when `--authorization-config` changes: a valid new file
 * replaces the chain without a restart; an invalid one is logged and the
 * chain in effect stays. Returns the function that stops watching.
 */
export function watchAuthorizationConfig(
  path: string,
  reload: (authorizers: readonly AuthorizerSpec[]) => Promise<void>,
  logger: Logger,
): () => void {
  let lastText = readTextOrUndefined(path)
  let running = Promise.resolve()
  const check = () => {
    running = running.then(async () => {
      const text = readTextOrUndefined(path)
      if (text === undefined || text === lastText) return
      lastText = text
      try {
        await reload(readAuthorizationConfig(path, text))
        logger.info({ file: path }, 'reloaded the authorization configuration')
      } catch (err) {
        logger.error({ file: path, err: err instanceof Error ? err.message : String(err) }, 'reloading the authorization configuration failed; the previous one stays in effect')
      }
    })
  }
  watchFile(path, { interval: POLL_MS, persistent: false }, check)
  return () => unwatchFile(path, check)
}

function readTextOrUndefined(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return undefined
  }
}
