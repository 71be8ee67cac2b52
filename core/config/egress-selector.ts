/**
 * EgressSelectorConfiguration, the file of `--egress-selector-config-file`:
 * through which proxy the server reaches the control plane, the cluster
 * (node agents, aggregated API servers, webhooks) and etcd. The structure and
 * upstream's rules are checked with field paths. `controlplane` and `cluster`
 * may go Direct, through an HTTP CONNECT proxy (TCP, with TLS for an
 * https:// URL, or a unix socket), or through a konnectivity proxy (GRPC on a
 * unix socket). What the server cannot do stops start-up rather than being
 * ignored, since a proxy is often a network boundary: any proxy for `etcd`,
 * whose gRPC client here cannot be given a tunnel.
 */
import { z } from 'zod'
import { duplicate, type FieldError, FieldPath, forbiddenField, invalid, notSupported, required } from '../machinery/field.js'
import { CONFIG_GROUP, type ConfigKind, decodeConfig } from './decode.js'
import { goList, goString } from './fields.js'
import { appendAll } from '../machinery/append-all.js'

const transportSchema = z.lazy(() => z.strictObject({
  tcp: z.strictObject({ url: goString, tlsConfig: z.strictObject({ caBundle: goString, clientKey: goString, clientCert: goString }).nullish() }).nullish(),
  uds: z.strictObject({ udsName: goString }).nullish(),
}))

const selectionSchema = z.lazy(() => z.strictObject({
  name: goString,
  connection: z.strictObject({ proxyProtocol: goString, transport: transportSchema.nullish() }),
}))

const egressSchema = z.lazy(() => z.strictObject({ egressSelections: goList(selectionSchema) }))

export type EgressSelectorConfiguration = z.infer<typeof egressSchema>

const NAMES = ['controlplane', 'cluster', 'etcd'] as const
const PROTOCOLS = ['HTTPConnect', 'GRPC', 'Direct'] as const

function validateEgress(config: EgressSelectorConfiguration): FieldError[] {
  const errs: FieldError[] = []
  const seen = new Set<string>()
  config.egressSelections.forEach((selection, i) => {
    const at = FieldPath.root('egressSelections').index(i)
    // `master` is upstream's former name of `controlplane`.
    const name = selection.name === 'master' ? 'controlplane' : selection.name
    if (!name) errs.push(required(at.child('name'), 'must specify a name'))
    else if (!(NAMES as readonly string[]).includes(name)) errs.push(notSupported(at.child('name'), selection.name, NAMES))
    else if (seen.has(name)) errs.push(duplicate(at.child('name'), selection.name))
    seen.add(name)
    const protocol = selection.connection.proxyProtocol
    const protocolPath = at.child('connection').child('proxyProtocol')
    if (!(PROTOCOLS as readonly string[]).includes(protocol)) {
      errs.push(notSupported(protocolPath, protocol, PROTOCOLS))
      return
    }
    if (protocol === 'Direct') {
      if (selection.connection.transport) errs.push(forbiddenField(at.child('connection').child('transport'), 'transport must be empty for the Direct proxy protocol'))
      return
    }
    if (name === 'etcd') {
      errs.push(invalid(protocolPath, protocol, 'the etcd client of this server cannot be tunnelled through a proxy: only "Direct" is supported for the etcd selection'))
      return
    }
    const transportPath = at.child('connection').child('transport')
    if (protocol === 'GRPC') appendAll(errs, validateGRPCTransport(selection.connection.transport, transportPath))
    else appendAll(errs, validateHTTPConnectTransport(selection.connection.transport, transportPath))
  })
  return errs
}

type Transport = z.infer<typeof transportSchema>

/** Upstream's rules for a GRPC transport: a unix socket with a name. */
function validateGRPCTransport(transport: Transport | null | undefined, at: FieldPath): FieldError[] {
  if (!transport) return [required(at, 'transport must be set for GRPC')]
  if (!transport.uds) return [required(at.child('uds'), 'UDS must be set with GRPC')]
  return transport.uds.udsName ? [] : [invalid(at.child('uds').child('udsName'), 'nil', 'UDSName should be present for UDS connections')]
}

/** Upstream's rules for an HTTPConnect transport: exactly one of tcp and uds, TLS settings as the URL's scheme needs. */
function validateHTTPConnectTransport(transport: Transport | null | undefined, at: FieldPath): FieldError[] {
  if (!transport) return [required(at, 'transport must be set for HTTPConnect')]
  const { tcp, uds } = transport
  if (tcp && uds) return [invalid(at.child('tcp'), 'tcp and uds', 'TCP and UDS cannot both be set')]
  if (uds) return uds.udsName ? [] : [invalid(at.child('uds').child('udsName'), 'nil', 'UDSName should be present for UDS connections')]
  if (!tcp) return [required(at.child('tcp'), 'one of TCP or UDS must be set')]
  const tcpAt = at.child('tcp')
  if (tcp.url.startsWith('http://')) {
    return tcp.tlsConfig ? [invalid(tcpAt.child('tlsConfig'), 'nil', 'TLSConfig config should not be present when using HTTP')] : []
  }
  if (!tcp.url.startsWith('https://')) return [invalid(tcpAt.child('url'), tcp.url, 'supported connection protocols are http:// and https://')]
  const tls = tcp.tlsConfig
  if (!tls) return [required(tcpAt.child('tlsConfig'), 'TLSConfig must be present when using HTTPS')]
  const errs: FieldError[] = []
  if (!tls.clientCert) errs.push(invalid(tcpAt.child('tlsConfig').child('clientCert'), 'nil', 'Using TLS requires clientCert'))
  if (!tls.clientKey) errs.push(invalid(tcpAt.child('tlsConfig').child('clientKey'), 'nil', 'Using TLS requires clientKey'))
  return errs
}

const EgressSelectorKind: ConfigKind<EgressSelectorConfiguration> = {
  kind: 'EgressSelectorConfiguration',
  apiVersions: ['apiserver.k8s.io/v1beta1', `${CONFIG_GROUP}/v1`, 'apiserver.k8s.io/v1', 'apiserver.k8s.io/v1alpha1'],
  schema: egressSchema,
  validate: validateEgress,
}

/** Reads and validates an EgressSelectorConfiguration. Throws ConfigFileError listing every problem. */
export function loadEgressSelectorConfiguration(text: string, source: string): EgressSelectorConfiguration {
  return decodeConfig(text, source, EgressSelectorKind)
}

/** The selections whose traffic may go through a proxy here (upstream's network contexts minus etcd). */
export type EgressSelectionName = 'controlplane' | 'cluster'

/**
 * A selection's proxy: HTTP CONNECT over a TCP address (TLS to it for
 * https://, with the files of the client pair and CA) or a unix socket, or
 * the konnectivity protocol over gRPC on a unix socket.
 */
export type EgressProxy =
  | { kind: 'tcp'; url: string; tls?: { caBundleFile?: string; clientCertFile: string; clientKeyFile: string } }
  | { kind: 'uds'; socketPath: string }
  | { kind: 'grpc'; socketPath: string }

/** The proxy of each selection that does not go Direct, from a validated configuration. */
export function egressProxies(config: EgressSelectorConfiguration | undefined): Map<EgressSelectionName, EgressProxy> {
  const proxies = new Map<EgressSelectionName, EgressProxy>()
  for (const selection of config?.egressSelections ?? []) {
    const name = selection.name === 'master' ? 'controlplane' : selection.name
    if (name !== 'controlplane' && name !== 'cluster') continue
    const protocol = selection.connection.proxyProtocol
    const { tcp, uds } = selection.connection.transport ?? {}
    if (protocol === 'GRPC' && uds) proxies.set(name, { kind: 'grpc', socketPath: uds.udsName })
    if (protocol !== 'HTTPConnect') continue
    if (uds) proxies.set(name, { kind: 'uds', socketPath: uds.udsName })
    else if (tcp) {
      const tls = tcp.tlsConfig
      proxies.set(name, {
        kind: 'tcp',
        url: tcp.url,
        ...(tls ? { tls: { ...(tls.caBundle ? { caBundleFile: tls.caBundle } : {}), clientCertFile: tls.clientCert, clientKeyFile: tls.clientKey } } : {}),
      })
    }
  }
  return proxies
}
