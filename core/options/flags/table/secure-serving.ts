/**
 * Secure serving flags: the HTTPS listener and its certificates (spec:
 * "Serving and networking", "Transport security").
 */
import { flag } from '../spec.js'

const section = 'Secure serving'

/** Where generated TLS files go unless --cert-dir says otherwise. */
export const DEFAULT_CERT_DIR = '/var/run/platform'

export const SECURE_SERVING_FLAGS = [
  flag({
    name: 'bind-address',
    kind: 'ip',
    default: '0.0.0.0',
    section,
    status: 'active',
    help: 'Address the secure port listens on. Blank, 0.0.0.0 or :: listen on every interface and address family.',
  }),
  flag({
    name: 'cert-dir',
    kind: 'string',
    default: DEFAULT_CERT_DIR,
    section,
    status: 'active',
    help: 'Directory of the TLS files. Without --tls-cert-file/--tls-private-key-file, the first start creates a CA, a serving certificate and an admin kubeconfig (admin.kubeconfig) here; later starts reuse them. An apiserver.crt and apiserver.key put here that no CA of the server issued (a test harness\'s, as envtest writes them) are served as they are and never rewritten.',
  }),
  flag({
    name: 'disable-http2-serving',
    kind: 'bool',
    default: false,
    section,
    status: 'active',
    help: 'Serve HTTP/1.1 only.',
  }),
  flag({
    name: 'http2-max-streams-per-connection',
    kind: 'int',
    default: 0,
    section,
    status: 'active',
    help: 'Most concurrent streams the server allows a client on one HTTP/2 connection; 0 means 250, the default of Go\'s HTTP/2 server upstream uses.',
  }),
  flag({
    name: 'permit-address-sharing',
    kind: 'bool',
    default: false,
    section,
    status: 'active',
    help: 'Bind with SO_REUSEADDR: wildcard and specific addresses may be bound side by side, and a restart need not wait for sockets in TIME_WAIT. Node binds every listening socket this way, so the server behaves as if this were always true.',
  }),
  flag({
    name: 'permit-port-sharing',
    kind: 'bool',
    default: false,
    section,
    status: 'active',
    help: 'Bind with SO_REUSEPORT, so that several servers may listen on the same address and port. Works on Linux under Bun, Deno, and Node 22.12 or later; a runtime that cannot bind this way refuses to start.',
  }),
  flag({
    name: 'secure-port',
    kind: 'int',
    default: 6443,
    section,
    status: 'active',
    help: 'Port of the HTTPS endpoint, where every request is authenticated and authorized. It cannot be turned off; 0 picks a free port (a project extension, handy in tests).',
  }),
  flag({
    name: 'tls-cert-file',
    kind: 'string',
    default: '',
    section,
    status: 'active',
    help: 'PEM file of the serving certificate, with any intermediate CA certificates after it. Without it and --tls-private-key-file, certificates are generated in --cert-dir. The file and its key are re-read when they change: new connections get the new certificate without a restart.',
  }),
  flag({
    name: 'tls-cipher-suites',
    kind: 'strings',
    default: [],
    section,
    status: 'active',
    help: 'Cipher suites the server offers for TLS 1.2 and older, comma separated, by their Go (IANA) names (TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, ...); they are mapped to OpenSSL\'s names. TLS 1.3 keeps its suites unless TLS 1.3 names are listed. An unknown name stops start-up. Empty: the runtime defaults.',
  }),
  flag({
    name: 'tls-min-version',
    kind: 'string',
    default: '',
    section,
    status: 'active',
    help: 'Oldest TLS version accepted: VersionTLS10, VersionTLS11, VersionTLS12 or VersionTLS13.',
  }),
  flag({
    name: 'tls-private-key-file',
    kind: 'string',
    default: '',
    section,
    status: 'active',
    help: 'PEM file of the private key that belongs to --tls-cert-file.',
  }),
  flag({
    name: 'tls-sni-cert-key',
    kind: 'namedCertKeys',
    default: [],
    section,
    status: 'active',
    help: 'A certificate and key file pair, optionally followed by :domain patterns, served to clients that ask for those names (SNI), e.g. \'foo.crt,foo.key:*.foo.com,foo.com\'. Patterns may start with a wildcard or be IP addresses (matched when the client sends the IP as its server name); without them the certificate\'s DNS names and common name are used. Exact names beat wildcards, given patterns beat names from certificates, an earlier flag beats a later one. The files are re-read when they change. Repeat the flag for more pairs.',
  }),
  flag({
    name: 'workers',
    kind: 'int',
    default: 1,
    section,
    status: 'active',
    extension: true,
    help: 'Serving processes behind the secure port, one per core to use. The first process writes the TLS files and admin kubeconfig once, opens the port for the others and restarts any that die. Each process is a server of its own, as several servers on one etcd are; on the embedded store (no --etcd-servers) they all open the one database in --data-dir.',
  }),
] as const

export const TLS_VERSIONS = ['VersionTLS10', 'VersionTLS11', 'VersionTLS12', 'VersionTLS13'] as const

/** Cipher suites upstream recommends. */
export const SECURE_TLS_CIPHER_SUITES = [
  'TLS_AES_128_GCM_SHA256',
  'TLS_AES_256_GCM_SHA384',
  'TLS_CHACHA20_POLY1305_SHA256',
  'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA',
  'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256',
  'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA',
  'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384',
  'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305',
  'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256',
  'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA',
  'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256',
  'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA',
  'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384',
  'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305',
  'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256',
] as const

/** Cipher suites accepted but known to be weak; using one is warned about. */
export const INSECURE_TLS_CIPHER_SUITES = [
  'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256',
  'TLS_ECDHE_ECDSA_WITH_RC4_128_SHA',
  'TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA',
  'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256',
  'TLS_ECDHE_RSA_WITH_RC4_128_SHA',
  'TLS_RSA_WITH_3DES_EDE_CBC_SHA',
  'TLS_RSA_WITH_AES_128_CBC_SHA',
  'TLS_RSA_WITH_AES_128_CBC_SHA256',
  'TLS_RSA_WITH_AES_128_GCM_SHA256',
  'TLS_RSA_WITH_AES_256_CBC_SHA',
  'TLS_RSA_WITH_AES_256_GCM_SHA384',
  'TLS_RSA_WITH_RC4_128_SHA',
] as const
