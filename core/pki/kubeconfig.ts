/**
 * A kubeconfig (clientcmd v1 Config) with everything embedded, so the file
 * works wherever it is copied: kubectl, client-go, @kubernetes/client-node
 * and the Python client all read this shape.
 */
import { stringify } from 'yaml'
import { base64EncodeText } from '../machinery/base64.js'

export interface KubeconfigOptions {
  /** e.g. `https://127.0.0.1:6443` */
  server: string
  /** PEM of the CA that signed the serving certificate. */
  certificateAuthority: string
  /** PEM client certificate and key. */
  clientCertificate: string
  clientKey: string
  /** @default 'apiserver' */
  clusterName?: string
  /** @default 'admin' */
  userName?: string
}

/** `https://host:port`, with brackets around an IPv6 literal. */
export function serverUrl(host: string, port: number): string {
  return `https://${host.includes(':') ? `[${host}]` : host}:${port}`
}

export function buildKubeconfig(opts: KubeconfigOptions): string {
  const cluster = opts.clusterName ?? 'apiserver'
  const user = opts.userName ?? 'admin'
  const context = `${user}@${cluster}`
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: cluster,
        cluster: {
          server: opts.server,
          'certificate-authority-data': base64EncodeText(opts.certificateAuthority),
        },
      },
    ],
    users: [
      {
        name: user,
        user: {
          'client-certificate-data': base64EncodeText(opts.clientCertificate),
          'client-key-data': base64EncodeText(opts.clientKey),
        },
      },
    ],
    contexts: [{ name: context, context: { cluster, user } }],
    'current-context': context,
    preferences: {},
  }, { lineWidth: 0 })
}
