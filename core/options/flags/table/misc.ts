/**
 * API enablement, egress selection, upstream's "Misc flags" (the cluster
 * Service, node agents, aggregation, peers, events) and the global flags.
 * Every `--nodeagent-*` flag also answers to its upstream `--kubelet-*`
 * spelling, and `--platform-service-node-port` to `--kubernetes-service-node-port`.
 */
import { DEFAULT_VERSION } from '../../../api/version.js'
import { flag } from '../spec.js'

const misc = 'Misc'

export const ENDPOINT_RECONCILER_TYPES = ['master-count', 'lease', 'none'] as const

const nodeAgent = { section: misc, status: 'active' } as const
const services = { section: misc, status: 'active' } as const
const peers = { section: misc, status: 'active' } as const
const leadership = { section: misc, status: 'active' } as const
const aggregation = { section: misc, status: 'active' } as const
const signingKey = { section: misc, status: 'active' } as const

export const MISC_FLAGS = [
  flag({
    name: 'runtime-config',
    kind: 'keyValuePairs',
    default: {},
    section: 'API enablement',
    status: 'active',
    help: 'Switch built-in APIs on or off, as comma-separated key=true|false pairs: v1 for the core group; <group>/<version> for one group version (e.g. apps/v1); api/all, api/ga, api/beta and api/alpha for every version, or every version of that stability. api/legacy is deprecated.',
  }),
  flag({
    name: 'egress-selector-config-file',
    kind: 'string',
    default: '',
    section: 'Egress selector',
    status: 'active',
    help: 'File with the egress selector configuration: through which proxy the server reaches the control plane (URL webhooks, authentication, authorization and audit webhooks, JWT issuers so marked) and the cluster (node agents, aggregated API servers, service webhooks). Direct, HTTPConnect (TCP, TLS for https://, or a unix socket) or GRPC (the konnectivity protocol on a unix socket); a proxy for etcd stops start-up.',
  }),
  flag({
    name: 'aggregator-reject-forwarding-redirect',
    kind: 'bool',
    default: true,
    ...aggregation,
    help: 'When proxying to an aggregated API server, refuse redirect responses instead of passing them to the client.',
  }),
  flag({
    name: 'allow-privileged',
    kind: 'bool',
    default: false,
    section: misc,
    status: 'active',
    help: 'Allow privileged containers: otherwise a pod or pod template asking for securityContext.privileged is refused.',
  }),
  flag({
    name: 'coordinated-leadership-lease-duration',
    kind: 'duration',
    default: 15_000,
    ...leadership,
    help: 'Duration of the leader election lease of the controllers that run once among the servers sharing one etcd (kube-system/kube-apiserver-controllers): a holder that stopped renewing it for this long is replaced.',
  }),
  flag({
    name: 'coordinated-leadership-renew-deadline',
    kind: 'duration',
    default: 10_000,
    ...leadership,
    help: 'A server that could not renew the controllers lease for this long stops its controllers; must be below the lease duration.',
  }),
  flag({
    name: 'coordinated-leadership-retry-period',
    kind: 'duration',
    default: 2000,
    ...leadership,
    help: 'Period between attempts to take or renew the controllers lease; the renew deadline must exceed 1.2 times it.',
  }),
  flag({
    name: 'enable-aggregator-routing',
    kind: 'bool',
    default: false,
    ...aggregation,
    help: 'Send aggregated API requests to endpoint IPs instead of the Service cluster IP.',
  }),
  flag({
    name: 'enable-logs-handler',
    kind: 'bool',
    default: false,
    section: misc,
    status: 'active',
    deprecated: 'the log handler is deprecated and will be removed in a future version',
    help: 'Serve the files of /var/log at /logs/ to users allowed to get /logs/* (cluster administrators by default).',
  }),
  flag({
    name: 'endpoint-reconciler-type',
    kind: 'string',
    default: 'lease',
    ...services,
    help: 'How the endpoints of the cluster Service are kept: lease, none, or master-count (deprecated, to be removed).',
  }),
  flag({
    name: 'event-ttl',
    kind: 'duration',
    default: 3_600_000,
    section: misc,
    status: 'active',
    help: 'How long events are kept after their last write: on etcd through leases (see --lease-reuse-duration-seconds), on the embedded store by its own expiry; watchers see an expired event DELETED.',
  }),
  flag({
    name: 'max-connection-bytes-per-sec',
    kind: 'int64',
    default: 0,
    section: misc,
    status: 'active',
    help: 'If not 0, throttle each user connection to this many bytes per second; only long-running requests are throttled: exec, attach and port-forward in each direction, and pods/log.',
  }),
  flag({
    name: 'nodeagent-certificate-authority',
    aliases: ['kubelet-certificate-authority'],
    kind: 'string',
    default: '',
    ...nodeAgent,
    help: 'CA file that verifies the node agents\' serving certificates (logs, exec, attach, port-forward, nodes/proxy). Without it, as upstream, those certificates are not verified.',
  }),
  flag({
    name: 'nodeagent-client-certificate',
    aliases: ['kubelet-client-certificate'],
    kind: 'string',
    default: '',
    ...nodeAgent,
    help: 'Client certificate file presented to node agents; with --nodeagent-client-key.',
  }),
  flag({
    name: 'nodeagent-client-key',
    aliases: ['kubelet-client-key'],
    kind: 'string',
    default: '',
    ...nodeAgent,
    help: 'Private key of --nodeagent-client-certificate.',
  }),
  flag({
    name: 'nodeagent-preferred-address-types',
    aliases: ['kubelet-preferred-address-types'],
    kind: 'strings',
    default: ['Hostname', 'InternalDNS', 'InternalIP', 'ExternalDNS', 'ExternalIP'],
    ...nodeAgent,
    help: 'Node address types tried, in order, to reach a node agent, comma separated: the first type in status.addresses wins; the port is status.daemonEndpoints.kubeletEndpoint.Port.',
  }),
  flag({
    name: 'nodeagent-timeout',
    aliases: ['kubelet-timeout'],
    kind: 'duration',
    default: 5000,
    ...nodeAgent,
    help: 'How long connecting to a node agent may take; a stream (logs -f, exec) then lasts as long as its client wants.',
  }),
  flag({
    name: 'peer-advertise-ip',
    kind: 'string',
    default: '',
    ...peers,
    help: 'With the UnknownVersionInteroperabilityProxy feature gate, the IP other servers use to proxy to this one the requests they cannot serve because of version skew. Only for clusters of several servers.',
  }),
  flag({
    name: 'peer-advertise-port',
    kind: 'string',
    default: '',
    ...peers,
    help: 'As --peer-advertise-ip, for the port. Peers use the two only when both are given; otherwise the advertised address and the secure port.',
  }),
  flag({
    name: 'peer-ca-file',
    kind: 'string',
    default: '',
    ...peers,
    help: "With the UnknownVersionInteroperabilityProxy feature gate, the CA file that verifies other servers' serving certificates (under the name kubernetes.default.svc) when this server forwards them a request; without it, the system's CAs. The proxy also needs --proxy-client-cert-file and --proxy-client-key-file. Only for clusters of several servers.",
  }),
  flag({
    name: 'platform-service-node-port',
    aliases: ['kubernetes-service-node-port'],
    kind: 'int',
    default: 0,
    ...services,
    help: "If not 0, the cluster's own Service ('kubernetes' in 'default') is of type NodePort on this port; 0 makes it ClusterIP.",
  }),
  flag({
    name: 'proxy-client-cert-file',
    kind: 'string',
    default: '',
    ...aggregation,
    help: "Client certificate that proves the server's identity when it calls out during a request (proxying to aggregated API servers, calling admission webhooks). It should be signed by the --requestheader-client-ca-file CA, which is published in the configmap extension-apiserver-authentication of kube-system.",
  }),
  flag({
    name: 'proxy-client-key-file',
    kind: 'string',
    default: '',
    ...aggregation,
    help: 'Private key of --proxy-client-cert-file.',
  }),
  flag({
    name: 'service-account-signing-endpoint',
    kind: 'string',
    default: '',
    ...signingKey,
    help: 'Socket of an external JWT signer that signs service account tokens and holds their keys. Not together with --service-account-signing-key-file or --service-account-key-file. Needs the ExternalServiceAccountTokenSigner feature gate.',
  }),
  flag({
    name: 'service-account-signing-key-file',
    kind: 'string',
    default: '',
    ...signingKey,
    help: 'File of the private key that signs issued service account tokens.',
  }),
  flag({
    name: 'service-cluster-ip-range',
    kind: 'cidrs',
    default: [],
    ...services,
    help: 'CIDR range from which Service cluster IPs are assigned; at most two, one IPv4 and one IPv6, for dual stack. It must not overlap the ranges of nodes or pods. Blank: 10.0.0.0/24.',
  }),
  flag({
    name: 'service-node-port-range',
    kind: 'portRange',
    default: { first: 30000, last: 32767 },
    ...services,
    help: "Ports reserved for NodePort Services, e.g. '30000-32767', inclusive at both ends. It must not overlap the nodes' ephemeral ports.",
  }),
  flag({
    name: 'help',
    short: 'h',
    kind: 'bool',
    default: false,
    section: 'Global',
    status: 'active',
    help: 'Print this help and exit.',
  }),
  flag({
    name: 'version',
    kind: 'version',
    default: DEFAULT_VERSION,
    section: 'Global',
    status: 'active',
    help: '--version or --version=raw prints the version and exits; --version=vX.Y.Z sets the version the server reports.',
  }),
] as const
