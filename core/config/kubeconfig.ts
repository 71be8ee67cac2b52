/**
 * Kubeconfig-format connection files (clientcmd v1 `Config`): how the server
 * reaches a webhook. `--authentication-token-webhook-config-file`,
 * `--authorization-webhook-config-file`, `--audit-webhook-config-file` and
 * an AuthorizationConfiguration's `connectionInfo.platformConfigFile` name
 * one. The file is the kind core/pki/kubeconfig.ts writes; this module reads
 * it back the way client-go does for a webhook: the current context must
 * name a usable cluster and user (clientcmd's ConfirmUsable), file
 * references are relative to the kubeconfig's directory, and the server
 * address is completed as the REST client completes it.
 */
import { z } from 'zod'
import { Base64Error, base64DecodeStrict } from '../machinery/base64.js'
import { duplicate, FieldPath, notSupported } from '../machinery/field.js'
import { isDNS1123Label } from '../machinery/names.js'
import { ConfigFileError, type ConfigProblem, parseConfigText, zodProblems } from './decode.js'
import { resolveFrom } from './file-path.js'
import { goBool, goList, goPointer, goString, goStruct } from './fields.js'
import { GoUrlError, parseGoUrl } from './go-url.js'
import { appendAll } from '../machinery/append-all.js'

const KIND = 'kubeconfig'

const extensions = z.lazy(() => goList(z.strictObject({ name: goString, extension: z.unknown() })))

const clusterShape = {
  server: goString,
  'tls-server-name': goString,
  'insecure-skip-tls-verify': goBool,
  'certificate-authority': goString,
  'certificate-authority-data': goString,
  'proxy-url': goString,
  'disable-compression': goBool,
  extensions,
}

const userShape = {
  'client-certificate': goString,
  'client-certificate-data': goString,
  'client-key': goString,
  'client-key-data': goString,
  token: goString,
  tokenFile: goString,
  as: goString,
  'as-uid': goString,
  'as-groups': goList(z.string()),
  'as-user-extra': goPointer(z.record(z.string(), z.array(z.string()))),
  username: goString,
  password: goString,
  'auth-provider': goPointer(z.record(z.string(), z.unknown())),
  exec: goPointer(z.record(z.string(), z.unknown())),
  extensions,
}

const contextShape = { cluster: goString, user: goString, namespace: goString, extensions }

const kubeconfigSchema = z.lazy(() => z.strictObject({
  apiVersion: goString,
  kind: goString,
  preferences: goPointer(z.strictObject({ colors: goBool, extensions })),
  clusters: goList(z.strictObject({ name: goString, cluster: goStruct(clusterShape) })),
  users: goList(z.strictObject({ name: goString, user: goStruct(userShape) })),
  contexts: goList(z.strictObject({ name: goString, context: goStruct(contextShape) })),
  'current-context': goString,
  extensions,
}))

type KubeconfigFile = z.infer<typeof kubeconfigSchema>

/** A user's fields that hold a credential or lead to one (an auth-provider's config and an exec plugin's env and args hold secrets too). */
const SECRET_USER_FIELDS = new Set<PropertyKey>(['client-key-data', 'client-key', 'token', 'password', 'auth-provider', 'exec'])

/**
 * Whether a value that fails the schema at `path` may hold a credential, and
 * is reported as `REDACTED`: a secret field or anything inside it, and every
 * value that contains a user (the file itself, `users`, an entry of it, its
 * `user`), as client-go never prints these either.
 */
function secretPath(path: readonly PropertyKey[]): boolean {
  if (path.length === 0) return true
  if (path[0] !== 'users') return false
  if (path.length <= 2) return true
  return path[2] === 'user' && (path.length === 3 || SECRET_USER_FIELDS.has(path[3]!))
}
type Cluster = KubeconfigFile['clusters'][number]['cluster']
type User = KubeconfigFile['users'][number]['user']

/** A PEM document given inline (`*-data`, decoded) or as a file path (resolved against the kubeconfig's directory). */
export type FileOrData = { file: string } | { data: Uint8Array }

/** Everything needed to open a connection to the webhook the kubeconfig describes. */
export interface KubeconfigConnection {
  /** `scheme://host[:port][/path]`; a bare `host:port` gets `https://` when any TLS setting is given, `http://` otherwise. */
  server: string
  tlsServerName?: string
  insecureSkipTLSVerify: boolean
  certificateAuthority?: FileOrData
  clientCertificate?: FileOrData
  clientKey?: FileOrData
  /** A bearer token; when unset, the runtime reads `tokenFile`. */
  token?: string
  tokenFile?: string
  basicAuth?: { username: string; password: string }
  impersonate?: { user: string; uid?: string; groups: string[]; extra: Record<string, string[]> }
  proxyURL?: string
  disableCompression: boolean
}

/**
 * The kubeconfig settings no webhook client of this server carries out:
 * basic auth, impersonation and a proxy. Each webhook flag refuses a file
 * naming them, rather than calling the webhook otherwise than the file says.
 */
export function unsupportedConnectionSettings(c: KubeconfigConnection): string | undefined {
  return c.basicAuth || c.impersonate || c.proxyURL ? 'basic auth, impersonation and proxies are not supported' : undefined
}

/** The `*-data` fields decode as Go's []byte does, from standard base64 with padding. */
function decodeData(text: string, path: FieldPath, problems: ConfigProblem[]): Uint8Array | undefined {
  if (text === '') return undefined
  try {
    return base64DecodeStrict(text)
  } catch (err) {
    if (!(err instanceof Base64Error)) throw err
    problems.push(`${String(path)}: ${err.message}`)
    return undefined
  }
}

/** Names must be unique within each list (client-go turns the lists into maps and refuses a repeated name). */
function duplicateNames(file: KubeconfigFile): ConfigProblem[] {
  const problems: ConfigProblem[] = []
  for (const list of ['clusters', 'users', 'contexts'] as const) {
    const seen = new Set<string>()
    file[list].forEach(({ name }, i) => {
      if (seen.has(name)) problems.push(duplicate(FieldPath.root(list).index(i).child('name'), name))
      seen.add(name)
    })
  }
  return problems
}

function isEmptyConfig(file: KubeconfigFile): boolean {
  const prefs = file.preferences
  return (
    file.clusters.length === 0 &&
    file.users.length === 0 &&
    file.contexts.length === 0 &&
    file['current-context'] === '' &&
    file.extensions.length === 0 &&
    (prefs === undefined || (!prefs.colors && prefs.extensions.length === 0))
  )
}

function isEmptyCluster(cluster: Cluster): boolean {
  return Object.values(cluster).every((v) => v === '' || v === false || (Array.isArray(v) && v.length === 0))
}

// clientcmd's validateClusterInfo, without the file checks: the runtime opens the files.
function clusterProblems(name: string, cluster: Cluster): string[] {
  if (isEmptyCluster(cluster)) return ['cluster has no server defined']
  const problems: string[] = []
  if (cluster.server === '') problems.push(name === '' ? 'default cluster has no server defined' : `no server found for cluster ${JSON.stringify(name)}`)
  const proxy = cluster['proxy-url']
  if (proxy !== '') {
    let reason: string | undefined
    try {
      const scheme = parseGoUrl(proxy).scheme
      if (!['http', 'https', 'socks5'].includes(scheme)) reason = `unsupported scheme ${JSON.stringify(scheme)}, must be http, https, or socks5`
    } catch {
      reason = `could not parse: ${proxy}`
    }
    if (reason) problems.push(`invalid 'proxy-url' ${JSON.stringify(proxy)} for cluster ${JSON.stringify(name)}: ${reason}`)
  }
  if (cluster['certificate-authority'] !== '' && cluster['certificate-authority-data'] !== '') {
    problems.push(`certificate-authority-data and certificate-authority are both specified for ${name}. certificate-authority-data will override.`)
  }
  if (cluster['insecure-skip-tls-verify'] && (cluster['certificate-authority'] !== '' || cluster['certificate-authority-data'] !== '')) {
    // The REST client refuses this pair when it builds the transport.
    problems.push('specifying a root certificates file with the insecure flag is not allowed')
  }
  return problems
}

// clientcmd's validateAuthInfo, without the file checks.
function userProblems(name: string, user: User): string[] {
  const problems: string[] = []
  const methods: string[] = []
  if (user.token !== '') methods.push('token')
  if (user.username !== '' || user.password !== '') methods.push('basicAuth')
  const hasCert = user['client-certificate'] !== '' || user['client-certificate-data'] !== ''
  const hasKey = user['client-key'] !== '' || user['client-key-data'] !== ''
  if (hasCert) {
    if (user['client-certificate'] !== '' && user['client-certificate-data'] !== '') {
      problems.push(`client-cert-data and client-cert are both specified for ${name}. client-cert-data will override.`)
    }
    if (user['client-key'] !== '' && user['client-key-data'] !== '') {
      problems.push(`client-key-data and client-key are both specified for ${name}; client-key-data will override`)
    }
    if (!hasKey) problems.push(`client-key-data or client-key must be specified for ${name} to use the clientCert authentication method.`)
  } else if (hasKey) {
    // Upstream silently ignores a key without a certificate; here it is a mistake worth stopping for.
    problems.push(`client-cert-data or client-cert must be specified for ${name} to use the clientCert authentication method.`)
  }
  // Both run programs or call out to identity providers, which a webhook connection cannot do here.
  if (user.exec) problems.push(`exec plugins are not supported for ${name}; use a token, a token file or a client certificate`)
  if (user['auth-provider']) problems.push(`auth-provider plugins are not supported for ${name}; use a token, a token file or a client certificate`)
  if (methods.length > 1) problems.push(`more than one authentication method found for ${name}; found [${methods.join(' ')}], only one is allowed`)
  const extra = user['as-user-extra'] ?? {}
  if ((user['as-uid'] !== '' || user['as-groups'].length > 0 || Object.keys(extra).length > 0) && user.as === '') {
    problems.push(`requesting uid, groups or user-extra for ${name} without impersonating a user`)
  }
  return problems
}

/** A context's cluster or user that the file does not define: every field at its zero value (made at first use, as the schemas are). */
let empty: { cluster: Cluster; user: User } | undefined
const emptyOnes = () => (empty ??= { cluster: z.strictObject(clusterShape).parse({}), user: z.strictObject(userShape).parse({}) })

/** The positions of the current context's cluster and user, or why they cannot be used (clientcmd's ConfirmUsable). */
function usable(file: KubeconfigFile): { cluster: number; user: number } | { problems: string[] } {
  if (isEmptyConfig(file)) return { problems: ['no configuration has been provided'] }
  const contextName = file['current-context']
  if (contextName === '') return { problems: ['no context chosen'] }
  const context = file.contexts.find((c) => c.name === contextName)?.context
  if (!context) return { problems: [`context was not found for specified context: ${contextName}`] }
  const problems: string[] = []
  const user = file.users.findIndex((u) => u.name === context.user)
  const cluster = file.clusters.findIndex((c) => c.name === context.cluster)
  const quoted = JSON.stringify(contextName)
  if (context.user === '') problems.push(`user was not specified for context ${quoted}`)
  else if (user < 0) problems.push(`user ${JSON.stringify(context.user)} was not found for context ${quoted}`)
  if (context.cluster === '') problems.push(`cluster was not specified for context ${quoted}`)
  else if (cluster < 0) problems.push(`cluster ${JSON.stringify(context.cluster)} was not found for context ${quoted}`)
  if (context.namespace !== '' && isDNS1123Label(context.namespace).length > 0) {
    problems.push(`namespace ${JSON.stringify(context.namespace)} for context ${quoted} does not conform to the kubernetes DNS_LABEL rules`)
  }
  // A missing user or cluster is checked as an empty one, as client-go does.
  appendAll(problems, userProblems(context.user, file.users[user]?.user ?? emptyOnes().user))
  appendAll(problems, clusterProblems(context.cluster, file.clusters[cluster]?.cluster ?? emptyOnes().cluster))
  return problems.length ? { problems } : { cluster, user }
}

/**
 * The REST client's completion of `server`: a bare `host:port` gets a
 * scheme, and only HTTP(S) can carry a webhook call. Unlike the REST client,
 * a URL that names a scheme but does not parse is refused rather than
 * prefixed with another scheme.
 */
function serverUrl(server: string, tls: boolean): { url: string } | { problem: string } {
  const parse = (text: string) => {
    try {
      return parseGoUrl(text)
    } catch (err) {
      if (err instanceof GoUrlError) return err
      throw err
    }
  }
  let url = server
  let parsed = parse(server)
  if (parsed instanceof GoUrlError && server.includes('://')) return { problem: parsed.message }
  if (parsed instanceof GoUrlError || parsed.scheme === '' || parsed.host === '') {
    url = `${tls ? 'https' : 'http'}://${server}`
    parsed = parse(url)
    if (parsed instanceof GoUrlError) return { problem: parsed.message }
  }
  if (parsed.scheme !== 'http' && parsed.scheme !== 'https') {
    return { problem: `unsupported protocol scheme ${JSON.stringify(parsed.scheme)} in server ${JSON.stringify(server)}` }
  }
  return { url }
}

function fileOrData(file: string, data: Uint8Array | undefined, source: string): FileOrData | undefined {
  if (data) return { data }
  return file === '' ? undefined : { file: resolveFrom(source, file) }
}

/**
 * Reads and validates a kubeconfig-format connection file found at
 * `source`. Throws ConfigFileError listing every problem; returns what is
 * needed to reach the server of its current context otherwise.
 */
export function loadKubeconfigConnection(text: string, source: string): KubeconfigConnection {
  const parsed = kubeconfigSchema.safeParse(parseConfigText(text, source, KIND) ?? {}, { reportInput: true })
  if (!parsed.success) throw new ConfigFileError(source, KIND, zodProblems(parsed.error.issues, undefined, secretPath))
  const file = parsed.data
  const problems: ConfigProblem[] = []
  // Both may be left out; client-go then assumes them.
  if (file.apiVersion !== '' && file.apiVersion !== 'v1') problems.push(notSupported(FieldPath.root('apiVersion'), file.apiVersion, ['v1']))
  if (file.kind !== '' && file.kind !== 'Config') problems.push(`kind: Invalid value: ${JSON.stringify(file.kind)}: must be "Config"`)
  appendAll(problems, duplicateNames(file))
  // Every entry's data is decoded, as client-go decodes the whole file, not only the entries in use.
  const caData = file.clusters.map(({ cluster }, i) =>
    decodeData(cluster['certificate-authority-data'], FieldPath.root('clusters').index(i).child('cluster').child('certificate-authority-data'), problems),
  )
  const userData = file.users.map(({ user }, i) => {
    const at = FieldPath.root('users').index(i).child('user')
    return {
      cert: decodeData(user['client-certificate-data'], at.child('client-certificate-data'), problems),
      key: decodeData(user['client-key-data'], at.child('client-key-data'), problems),
    }
  })
  if (problems.length) throw new ConfigFileError(source, KIND, problems)

  const found = usable(file)
  if ('problems' in found) throw new ConfigFileError(source, KIND, found.problems)
  const cluster = file.clusters[found.cluster]?.cluster ?? emptyOnes().cluster
  const user = file.users[found.user]?.user ?? emptyOnes().user
  const ca = fileOrData(cluster['certificate-authority'], caData[found.cluster], source)
  const cert = fileOrData(user['client-certificate'], userData[found.user]?.cert, source)
  const key = fileOrData(user['client-key'], userData[found.user]?.key, source)
  const server = serverUrl(cluster.server, Boolean(ca || cert || cluster['insecure-skip-tls-verify']))
  if ('problem' in server) throw new ConfigFileError(source, KIND, [server.problem])

  return {
    server: server.url,
    ...(cluster['tls-server-name'] ? { tlsServerName: cluster['tls-server-name'] } : {}),
    insecureSkipTLSVerify: cluster['insecure-skip-tls-verify'],
    ...(ca ? { certificateAuthority: ca } : {}),
    ...(cert ? { clientCertificate: cert } : {}),
    ...(key ? { clientKey: key } : {}),
    ...(user.token ? { token: user.token } : {}),
    ...(user.tokenFile ? { tokenFile: resolveFrom(source, user.tokenFile) } : {}),
    ...(user.username || user.password ? { basicAuth: { username: user.username, password: user.password } } : {}),
    ...(user.as ? { impersonate: impersonation(user) } : {}),
    ...(cluster['proxy-url'] ? { proxyURL: cluster['proxy-url'] } : {}),
    disableCompression: cluster['disable-compression'],
  }
}

function impersonation(user: User): NonNullable<KubeconfigConnection['impersonate']> {
  return {
    user: user.as,
    ...(user['as-uid'] ? { uid: user['as-uid'] } : {}),
    groups: user['as-groups'],
    extra: user['as-user-extra'] ?? {},
  }
}
