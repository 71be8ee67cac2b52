/**
 * The daemon's command line. The flag table is data (DESIGN.md section 7):
 * the parser and `--help` both come from it. Parsing follows upstream's
 * pflag rules exactly (`--flag=value` and `--flag value`; booleans and
 * `--version` take a value only after `=`; the last repeat wins; no
 * positional arguments), and every bad input names the flag and the reason.
 *
 * cac was tried first and dropped: its mri tokenizer turns values into
 * numbers (`--cert-dir=007` became 7), lets `--flag=` swallow the next
 * argument, and invents `--no-x` negation and dotted nesting.
 */
import { isIP } from 'node:net'
import { DEFAULT_VERSION } from '../../core/api/version.js'
import { parseGoDuration } from '../../core/options/duration.js'

export type FlagType = 'int' | 'string' | 'bool' | 'duration' | 'ip' | 'version'

export interface FlagSpec {
  name: string
  short?: string
  type: FlagType
  /** Shown in help as `(default …)`; parsing defaults live in DaemonFlags. */
  defaultText?: string
  section: 'Secure serving' | 'Authentication' | 'Storage' | 'Generic' | 'Global'
  help: string
  /** Allowed values of a string flag. */
  oneOf?: readonly string[]
}

export const DEFAULT_CERT_DIR = '/var/run/platform'

export const FLAGS: readonly FlagSpec[] = [
  {
    name: 'advertise-address',
    type: 'ip',
    section: 'Generic',
    help: 'IP address announced to the other members of the cluster, who must be able to reach it. Blank: the bind address. Also written into the generated serving certificate.',
  },
  {
    name: 'request-timeout',
    type: 'duration',
    defaultText: '1m0s',
    section: 'Generic',
    help: 'Deadline of ordinary requests; a request past it is answered 504 Timeout. A client may ask for less with ?timeout=. Watches follow --min-request-timeout instead.',
  },
  {
    name: 'min-request-timeout',
    type: 'int',
    defaultText: '1800',
    section: 'Generic',
    help: 'Shortest life of a watch, in seconds. Each watch ends at a random time between this and twice this, so that clients do not all reconnect at once.',
  },
  {
    name: 'storage-backend',
    type: 'string',
    section: 'Storage',
    oneOf: ['kvstore3', 'etcd3'],
    help: "The storage backend for persistence. Option: 'kvstore3' (alias 'etcd3'). Accepted but not yet in effect: objects are kept in memory.",
  },
  {
    name: 'data-dir',
    type: 'string',
    section: 'Storage',
    help: 'Directory of the embedded durable store. Accepted but not yet in effect: the embedded store is not implemented, objects are kept in memory.',
  },
  {
    name: 'bind-address',
    type: 'ip',
    defaultText: '0.0.0.0',
    section: 'Secure serving',
    help: 'Address the secure port listens on. Blank, 0.0.0.0 or :: listen on every interface and address family.',
  },
  {
    name: 'cert-dir',
    type: 'string',
    defaultText: DEFAULT_CERT_DIR,
    section: 'Secure serving',
    help: 'Directory of the TLS files. Without --tls-cert-file/--tls-private-key-file, the first start creates a CA, a serving certificate and an admin kubeconfig (admin.kubeconfig) here; later starts reuse them.',
  },
  {
    name: 'disable-http2-serving',
    type: 'bool',
    defaultText: 'false',
    section: 'Secure serving',
    help: 'Serve HTTP/1.1 only.',
  },
  {
    name: 'secure-port',
    type: 'int',
    defaultText: '6443',
    section: 'Secure serving',
    help: 'Port of the HTTPS endpoint, where every request is authenticated and authorized. 0 picks a free port.',
  },
  {
    name: 'tls-cert-file',
    type: 'string',
    section: 'Secure serving',
    help: 'PEM file of the serving certificate, with any intermediate CA certificates after it. Without it and --tls-private-key-file, certificates are generated in --cert-dir.',
  },
  {
    name: 'tls-private-key-file',
    type: 'string',
    section: 'Secure serving',
    help: 'PEM file of the private key that belongs to --tls-cert-file.',
  },
  {
    name: 'anonymous-auth',
    type: 'bool',
    defaultText: 'true',
    section: 'Authentication',
    help: 'Let requests that carry no credential through as user system:anonymous in group system:unauthenticated. A wrong credential is refused all the same. Forced off while the authorization mode is AlwaysAllow.',
  },
  {
    name: 'client-ca-file',
    type: 'string',
    section: 'Authentication',
    help: 'PEM bundle of the CAs trusted for client certificates: a certificate they signed authenticates as its CommonName, with its Organizations as groups. Without it, the CA generated in --cert-dir is trusted.',
  },
  {
    name: 'token-auth-file',
    type: 'string',
    section: 'Authentication',
    help: 'CSV file of static bearer tokens: token,user,uid,"group1,group2".',
  },
  { name: 'help', short: 'h', type: 'bool', section: 'Global', help: 'Print this help and exit.' },
  {
    name: 'version',
    type: 'version',
    section: 'Global',
    help: '--version or --version=raw prints the version and exits; --version=vX.Y.Z sets the version the server reports.',
  },
]

export interface DaemonFlags {
  securePort: number
  bindAddress: string
  advertiseAddress?: string
  certDir: string
  tlsCertFile?: string
  tlsPrivateKeyFile?: string
  clientCaFile?: string
  tokenAuthFile?: string
  anonymousAuth: boolean
  dataDir?: string
  storageBackend?: 'kvstore3' | 'etcd3'
  requestTimeoutMs: number
  minRequestTimeoutSeconds: number
  disableHttp2Serving: boolean
  /** The version `/version` reports. */
  version: string
}

export type CommandLine =
  | { action: 'help' }
  | { action: 'version'; raw: boolean; version: string }
  | { action: 'run'; flags: DaemonFlags }

/** A bad command line; the message is what the user sees after `Error: `. */
export class FlagError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'FlagError'
  }
}

/** strconv.ParseBool. */
function parseBool(value: string): boolean | undefined {
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(value)) return true
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(value)) return false
  return undefined
}

type RawValues = Map<string, string>

/** Splits argv into flag values by pflag's rules; values stay text. */
function tokenize(argv: readonly string[]): RawValues {
  const byName = new Map(FLAGS.map((f) => [f.name, f]))
  const byShort = new Map(FLAGS.filter((f) => f.short).map((f) => [f.short, f]))
  const values: RawValues = new Map()
  const positional: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? ''
    if (arg === '--') {
      positional.push(...argv.slice(i + 1))
      break
    }
    if (!arg.startsWith('-') || arg === '-') {
      positional.push(arg)
      continue
    }
    let spec: FlagSpec | undefined
    let inline: string | undefined
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=')
      const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq)
      if (eq !== -1) inline = arg.slice(eq + 1)
      spec = byName.get(name)
      if (!spec) throw new FlagError(`unknown flag: --${name}`)
    } else {
      // Shorthand: only -h exists; `-secure-port` is a typo for `--secure-port`.
      const letter = arg[1] ?? ''
      spec = byShort.get(letter)
      if (!spec || arg.length > 2) throw new FlagError(`unknown shorthand flag: '${spec ? arg[2] : letter}' in ${arg}`)
    }
    if (inline !== undefined) {
      values.set(spec.name, inline)
    } else if (spec.type === 'bool' || spec.type === 'version') {
      // pflag's NoOptDefVal: a bare boolean means true; `--x false` is not a value.
      values.set(spec.name, 'true')
    } else {
      const next = argv[i + 1]
      if (next === undefined) throw new FlagError(`flag needs an argument: --${spec.name}`)
      values.set(spec.name, next)
      i++
    }
  }
  const extra = positional.filter((p) => p !== '')
  if (extra.length) throw new FlagError(`"apiserver" does not take any arguments, got ${JSON.stringify(extra)}`)
  return values
}

function invalidArgument(name: string, value: string, reason: string): FlagError {
  return new FlagError(`invalid argument ${JSON.stringify(value)} for "--${name}" flag: ${reason}`)
}

/** Reads argv (without node and script). Throws FlagError with a message naming the flag. */
export function parseFlags(argv: readonly string[]): CommandLine {
  const raw = tokenize(argv)

  const str = (name: string): string | undefined => raw.get(name)
  const bool = (name: string, fallback: boolean): boolean => {
    const value = raw.get(name)
    if (value === undefined) return fallback
    const parsed = parseBool(value)
    if (parsed === undefined) throw invalidArgument(name, value, 'must be a boolean (true or false)')
    return parsed
  }
  const int = (name: string, fallback: number): number => {
    const value = raw.get(name)
    if (value === undefined) return fallback
    if (!/^[+-]?\d+$/.test(value)) throw invalidArgument(name, value, 'must be an integer')
    const n = Number(value)
    if (!Number.isSafeInteger(n)) throw invalidArgument(name, value, 'value out of range')
    return n
  }
  const duration = (name: string, fallbackMs: number): number => {
    const value = raw.get(name)
    if (value === undefined) return fallbackMs
    const ms = parseGoDuration(value)
    if (ms === undefined) throw invalidArgument(name, value, `time: invalid duration ${JSON.stringify(value)} (use Go syntax like 1m0s, 30s, 500ms)`)
    return ms
  }
  const ip = (name: string): string | undefined => {
    const value = raw.get(name)
    if (value === undefined || value === '') return undefined
    if (isIP(value) === 0) throw invalidArgument(name, value, `failed to parse IP: ${JSON.stringify(value)}`)
    return value
  }

  if (bool('help', false)) return { action: 'help' }

  let version = DEFAULT_VERSION
  const versionFlag = raw.get('version')
  if (versionFlag !== undefined) {
    if (versionFlag === 'raw') return { action: 'version', raw: true, version }
    if (versionFlag.startsWith('v')) {
      if (!/^v\d+\.\d+\.\d+([-+][0-9A-Za-z.+-]+)?$/.test(versionFlag)) {
        throw invalidArgument('version', versionFlag, 'must be a semantic version like v1.32.0')
      }
      version = versionFlag
    } else {
      const print = parseBool(versionFlag)
      if (print === undefined) throw invalidArgument('version', versionFlag, 'must be true, false, raw or a version like v1.32.0')
      if (print) return { action: 'version', raw: false, version }
    }
  }

  const securePort = int('secure-port', 6443)
  if (securePort < 0 || securePort > 65535) {
    throw invalidArgument('secure-port', String(securePort), 'must be between 0 and 65535, inclusive (0 picks a free port)')
  }
  const requestTimeoutMs = duration('request-timeout', 60_000)
  if (requestTimeoutMs < 0) throw invalidArgument('request-timeout', str('request-timeout') ?? '', 'can not be negative value')
  const minRequestTimeoutSeconds = int('min-request-timeout', 1800)
  if (minRequestTimeoutSeconds < 0) {
    throw invalidArgument('min-request-timeout', String(minRequestTimeoutSeconds), 'can not be negative value')
  }

  const storageBackend = str('storage-backend')
  const allowed = FLAGS.find((f) => f.name === 'storage-backend')?.oneOf ?? []
  if (storageBackend !== undefined && storageBackend !== '' && !allowed.includes(storageBackend)) {
    throw invalidArgument('storage-backend', storageBackend, `must be one of ${allowed.join(', ')}`)
  }

  const tlsCertFile = str('tls-cert-file') || undefined
  const tlsPrivateKeyFile = str('tls-private-key-file') || undefined
  if (Boolean(tlsCertFile) !== Boolean(tlsPrivateKeyFile)) {
    throw new FlagError('--tls-cert-file and --tls-private-key-file must be given together')
  }

  const flags: DaemonFlags = {
    securePort,
    bindAddress: ip('bind-address') ?? '0.0.0.0',
    certDir: str('cert-dir') || DEFAULT_CERT_DIR,
    anonymousAuth: bool('anonymous-auth', true),
    requestTimeoutMs,
    minRequestTimeoutSeconds,
    disableHttp2Serving: bool('disable-http2-serving', false),
    version,
  }
  const advertiseAddress = ip('advertise-address')
  if (advertiseAddress) flags.advertiseAddress = advertiseAddress
  if (tlsCertFile && tlsPrivateKeyFile) {
    flags.tlsCertFile = tlsCertFile
    flags.tlsPrivateKeyFile = tlsPrivateKeyFile
  }
  const optional = { clientCaFile: 'client-ca-file', tokenAuthFile: 'token-auth-file', dataDir: 'data-dir' } as const
  for (const [key, name] of Object.entries(optional) as [keyof typeof optional, string][]) {
    const value = str(name)
    if (value) flags[key] = value
  }
  if (storageBackend === 'kvstore3' || storageBackend === 'etcd3') flags.storageBackend = storageBackend
  return { action: 'run', flags }
}

const TYPE_NAMES: Record<FlagType, string> = {
  int: 'int',
  string: 'string',
  bool: '',
  duration: 'duration',
  ip: 'ip',
  version: 'version[=true]',
}

const HELP_WIDTH = 120

/** Greedy word wrap; help reads better in a terminal than one long line per flag. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = []
  let line = ''
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line)
      line = word
    } else {
      line = line ? `${line} ${word}` : word
    }
  }
  if (line) lines.push(line)
  return lines
}

const SECTIONS: readonly FlagSpec['section'][] = ['Generic', 'Storage', 'Secure serving', 'Authentication', 'Global']

/** `--help`, laid out like upstream's: a usage line, then one block per flag section. */
export function helpText(): string {
  const lines = [
    'apiserver: a Kubernetes-compatible API server. It checks and stores API objects',
    '(namespaces, configmaps, secrets, service accounts, ...), serves REST and watch',
    'over HTTPS, and is the one door through which the rest of a cluster shares state.',
    '',
    'Usage:',
    '  apiserver [flags]',
  ]
  for (const section of SECTIONS) {
    const flags = FLAGS.filter((f) => f.section === section)
    const left = flags.map((f) => {
      const names = f.short ? `  -${f.short}, --${f.name}` : `      --${f.name}`
      const type = TYPE_NAMES[f.type]
      return type ? `${names} ${type}` : names
    })
    const width = Math.max(...left.map((l) => l.length)) + 3
    lines.push('', `${section} flags:`, '')
    flags.forEach((f, i) => {
      const suffix = f.defaultText !== undefined ? ` (default ${f.type === 'string' ? JSON.stringify(f.defaultText) : f.defaultText})` : ''
      const [first = '', ...rest] = wrap(`${f.help}${suffix}`, Math.max(40, HELP_WIDTH - width))
      lines.push(`${(left[i] ?? '').padEnd(width)}${first}`, ...rest.map((l) => `${' '.repeat(width)}${l}`))
    })
  }
  return `${lines.join('\n')}\n`
}
