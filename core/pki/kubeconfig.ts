/**
 * A kubeconfig (clientcmd v1 Config) with everything embedded, so the file
 * works wherever it is copied: kubectl, client-go, @kubernetes/client-node
 * and the Python client all read this shape.
 */
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

/** Text that every YAML reader takes as this very string when written plain: no indicator, space or number. */
const PLAIN = /^[A-Za-z][A-Za-z0-9+/=._@:-]*$/
/** Words YAML 1.1's readers (Go's, which kubectl uses) take for a boolean or null. */
const YAML_11_WORDS = /^(y|yes|n|no|true|false|on|off|null)$/i

/**
 * A YAML scalar for any text: plain where that is safe (URLs, base64 data,
 * the default names, as kubeconfigs are usually written), otherwise
 * double-quoted, whose syntax JSON's strings share, so the text reads back
 * as it was whatever characters it holds.
 */
const scalar = (text: string): string => (PLAIN.test(text) && !text.endsWith(':') && !YAML_11_WORDS.test(text) ? text : JSON.stringify(text))

/**
 * The file's text. Its shape is fixed, so it is written line by line rather
 * than by the YAML library, whose first use in a process (the daemon writes
 * the file at every start) cost some 5 to 10 ms of cold code.
 */
export function buildKubeconfig(opts: KubeconfigOptions): string {
  const cluster = opts.clusterName ?? 'apiserver'
  const user = opts.userName ?? 'admin'
  const context = `${user}@${cluster}`
  const lines = [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `  - name: ${scalar(cluster)}`,
    '    cluster:',
    `      server: ${scalar(opts.server)}`,
    `      certificate-authority-data: ${scalar(base64EncodeText(opts.certificateAuthority))}`,
    'users:',
    `  - name: ${scalar(user)}`,
    '    user:',
    `      client-certificate-data: ${scalar(base64EncodeText(opts.clientCertificate))}`,
    `      client-key-data: ${scalar(base64EncodeText(opts.clientKey))}`,
    'contexts:',
    `  - name: ${scalar(context)}`,
    '    context:',
    `      cluster: ${scalar(cluster)}`,
    `      user: ${scalar(user)}`,
    `current-context: ${scalar(context)}`,
    'preferences: {}',
  ]
  return `${lines.join('\n')}\n`
}
