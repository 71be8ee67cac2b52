/**
 * The authentication methods the daemon configures from its flags and
 * files: the JWT authenticators (`--authentication-config`'s `jwt` list, or
 * the one of the `--oidc-*` flags), the anonymous section of the file, and
 * the token webhook (`--authentication-token-webhook-*`), its kubeconfig's
 * files read here so that core gets PEM text.
 */
import { readFileSync } from 'node:fs'
import { jwtAuthenticatorFromOidcFlags } from '../../../core/config/authentication-oidc-flags.js'
import { type FileOrData, type KubeconfigConnection, unsupportedConnectionSettings } from '../../../core/config/kubeconfig.js'
import type { AuthenticationOptions, TokenWebhookOptions } from '../../../core/authn/authentication-options.js'
import type { ParsedFlags } from '../../../core/options/flags/index.js'
import type { ConfigFiles } from './config-files.js'

/** A problem the user must fix before the daemon starts. */
export class AuthenticationSetupError extends Error {}

function pemOf(source: FileOrData, what: string): string {
  if ('data' in source) return new TextDecoder().decode(source.data)
  try {
    return readFileSync(source.file, 'utf8')
  } catch (err) {
    throw new AuthenticationSetupError(`${what}: cannot read ${source.file}: ${(err as Error).message}`)
  }
}

function tokenWebhook(connection: KubeconfigConnection, values: ParsedFlags['values']): TokenWebhookOptions {
  const what = '--authentication-token-webhook-config-file'
  // As for the other webhook kubeconfigs: the webhook is not called otherwise than the file says.
  const unsupported = unsupportedConnectionSettings(connection)
  if (unsupported) throw new AuthenticationSetupError(`${what}: ${unsupported}; use a client certificate`)
  if (connection.insecureSkipTLSVerify) throw new AuthenticationSetupError(`${what}: insecure-skip-tls-verify is not supported`)
  if (connection.token || connection.tokenFile || connection.basicAuth) {
    throw new AuthenticationSetupError(`${what}: only client certificates are supported as the server's credential to the webhook`)
  }
  if (Boolean(connection.clientCertificate) !== Boolean(connection.clientKey)) {
    throw new AuthenticationSetupError(`${what}: client-certificate and client-key must be given together`)
  }
  const version = values['authentication-token-webhook-version']
  return {
    url: connection.server,
    ...(connection.certificateAuthority ? { certificateAuthority: pemOf(connection.certificateAuthority, what) } : {}),
    ...(connection.tlsServerName ? { serverName: connection.tlsServerName } : {}),
    ...(connection.clientCertificate && connection.clientKey
      ? { clientCertificate: { certificate: pemOf(connection.clientCertificate, what), key: pemOf(connection.clientKey, what) } }
      : {}),
    version: version === 'v1' ? 'v1' : 'v1beta1',
    cacheTtlMs: values['authentication-token-webhook-cache-ttl'],
  }
}

function oidcFlags(values: ParsedFlags['values']): AuthenticationOptions['jwt'] {
  const caFile = values['oidc-ca-file']
  let certificateAuthority: string | undefined
  if (caFile) {
    try {
      certificateAuthority = readFileSync(caFile, 'utf8')
    } catch (err) {
      throw new AuthenticationSetupError(`--oidc-ca-file: cannot read ${caFile}: ${(err as Error).message}`)
    }
  }
  try {
    return [
      jwtAuthenticatorFromOidcFlags({
        issuerUrl: values['oidc-issuer-url'],
        clientId: values['oidc-client-id'],
        ...(certificateAuthority ? { certificateAuthority } : {}),
        usernameClaim: values['oidc-username-claim'],
        usernamePrefix: values['oidc-username-prefix'],
        groupsClaim: values['oidc-groups-claim'],
        groupsPrefix: values['oidc-groups-prefix'],
        requiredClaims: values['oidc-required-claim'],
      }),
    ]
  } catch (err) {
    throw new AuthenticationSetupError(`--oidc-*: ${(err as Error).message}`)
  }
}

/** The JWT and token-webhook options (the file's anonymous section is the daemon's, beside --anonymous-auth). */
export function jwtAndWebhookOptions(parsed: ParsedFlags, files: ConfigFiles): AuthenticationOptions {
  const { values } = parsed
  const options: AuthenticationOptions = {}
  const file = files.authentication
  if (file) {
    // Given even when empty, so that a reload of the file can add authenticators.
    options.jwt = file.jwt
  } else if (values['oidc-issuer-url'] && values['oidc-client-id']) {
    options.jwt = oidcFlags(values)
    options.jwtSigningAlgorithms = values['oidc-signing-algs']
  }
  if (files.tokenWebhook) options.tokenWebhook = tokenWebhook(files.tokenWebhook, values)
  return options
}
