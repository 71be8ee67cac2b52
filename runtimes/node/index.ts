/**
 * `kube-apiserver-ts/node` for embedders: put an in-process ApiServer on an
 * ephemeral loopback TLS port and get a kubeconfig for it, so a test can
 * hand real clients (kubectl, @kubernetes/client-node's
 * `kc.loadFromString`) a working cluster. Certificates live in memory only.
 */
import { createCertificateAuthority, issueClientCertificate, issueServingCertificate } from '../../core/pki/certificates.js'
import { buildKubeconfig, serverUrl } from '../../core/pki/kubeconfig.js'
import { type Logger, silentLogger } from '../../core/logging/logger.js'
import { ADMIN_USER } from './daemon/pki.js'
import { type FetchHandler, serveTls } from './adapter/serve.js'
import type { runDaemon as RunDaemon } from './daemon/daemon.js'

/**
 * The daemon (`apiserver [flags]`) in this process. Its modules (the flags,
 * the logger, the stores' clients) load at the first call, not with this
 * entry point, which a test that only listens does not need them for.
 */
export const runDaemon: typeof RunDaemon = async (...args) => (await import('./daemon/daemon.js')).runDaemon(...args)
export { nodeWebhookClient } from './daemon/webhook-client.js'
export { nodeKmsClients } from './daemon/kms-clients.js'
export { type NodeYamlDecoder, nodeYamlDecoder, type NodeYamlDecoderOptions } from './daemon/yaml-decoder.js'
export { type FetchHandler, serveTls, type ServeTlsOptions, type TlsListener } from './adapter/serve.js'

export interface ListenOptions {
  /** @default '127.0.0.1' */
  host?: '127.0.0.1' | '::1'
  /** @default 0 (a free port) */
  port?: number
  /** Serve HTTP/2 next to HTTP/1.1. @default true */
  http2?: boolean
  /** @default silent */
  logger?: Logger
}

export interface Listening {
  /** e.g. `https://127.0.0.1:40123` */
  url: string
  port: number
  /** kubeconfig YAML: trusts the server's CA and authenticates as kubernetes-admin (group system:masters). */
  kubeconfig: string
  /** Stops listening and ends open watches on this listener. Does not shut the ApiServer down. */
  close(): Promise<void>
}

export async function listen(server: FetchHandler, opts: ListenOptions = {}): Promise<Listening> {
  const host = opts.host ?? '127.0.0.1'
  const ca = await createCertificateAuthority({ commonName: 'apiserver-ephemeral-ca' })
  const [serving, admin] = await Promise.all([
    issueServingCertificate(ca, { commonName: 'kube-apiserver', dnsNames: ['localhost'], ipAddresses: [host] }),
    issueClientCertificate(ca, ADMIN_USER),
  ])
  const listener = await serveTls(server, {
    host,
    port: opts.port ?? 0,
    key: serving.privateKey,
    cert: serving.certificate,
    clientCA: ca.certificate,
    http2: opts.http2 ?? true,
    logger: opts.logger ?? silentLogger,
  })
  const url = serverUrl(host, listener.port)
  return {
    url,
    port: listener.port,
    kubeconfig: buildKubeconfig({ server: url, certificateAuthority: ca.certificate, clientCertificate: admin.certificate, clientKey: admin.privateKey }),
    close: () => listener.close(),
  }
}
