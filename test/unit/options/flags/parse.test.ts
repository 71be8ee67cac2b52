import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { DEFAULT_VERSION } from '../../../../core/api/version.js'
import { FlagError, type ParsedFlags, parseCommandLine } from '../../../../core/options/flags/index.js'

function run(argv: string[]): ParsedFlags {
  const command = parseCommandLine(argv)
  if (command.action !== 'run') assert.fail(`expected run, got ${command.action}`)
  return command.flags
}

function problem(argv: string[]): string {
  try {
    parseCommandLine(argv)
  } catch (err) {
    assert.ok(err instanceof FlagError)
    return err.message
  }
  return assert.fail(`${argv.join(' ')} parsed`)
}

describe('parseCommandLine', () => {
  it('fills every flag with its typed default when nothing is given', () => {
    const { values, set } = run([])
    assert.equal(set.size, 0)
    assert.equal(values['secure-port'], 6443)
    assert.equal(values['bind-address'], '0.0.0.0')
    assert.equal(values['request-timeout'], 60_000)
    assert.equal(values['anonymous-auth'], true)
    assert.deepEqual(values['oidc-signing-algs'], ['RS256'])
    assert.deepEqual(values['service-node-port-range'], { first: 30000, last: 32767 })
    assert.equal(values['kvstore-prefix'], '/registry')
    assert.equal(values['audit-webhook-batch-max-wait'], 30_000)
    assert.equal(values.version, DEFAULT_VERSION)
  })

  it('takes values after = or as the next argument; booleans only after =', () => {
    const { values } = run(['--secure-port', '7443', '--cert-dir=007', '--anonymous-auth=false', '--profiling', '--audit-log-path', '-'])
    assert.equal(values['secure-port'], 7443)
    assert.equal(values['cert-dir'], '007')
    assert.equal(values['anonymous-auth'], false)
    assert.equal(values.profiling, true)
    assert.equal(values['audit-log-path'], '-')
    assert.match(problem(['--anonymous-auth', 'false']), /^"apiserver" does not take any arguments, got \["false"\]$/)
  })

  it('lets the last use win, and adds up the uses of list flags', () => {
    const { values } = run(['--secure-port=1', '--secure-port=2', '--enable-admission-plugins=A,B', '--enable-admission-plugins=C'])
    assert.equal(values['secure-port'], 2)
    assert.deepEqual(values['enable-admission-plugins'], ['A', 'B', 'C'])
    // The first use replaces a list default rather than adding to it.
    assert.deepEqual(run(['--oidc-signing-algs=ES256']).values['oidc-signing-algs'], ['ES256'])
    assert.deepEqual(run(['--service-account-issuer=https://a,b', '--service-account-issuer=c']).values['service-account-issuer'], ['https://a,b', 'c'])
  })

  it('accepts the upstream spelling of renamed flags, and _ for -', () => {
    const flags = run(['--etcd-servers=https://10.0.0.1:2379', '--kubelet-timeout=10s', '--kubernetes-service-node-port=30001', '--secure_port=8443'])
    assert.deepEqual(flags.values['kvstore-servers'], ['https://10.0.0.1:2379'])
    assert.equal(flags.values['nodeagent-timeout'], 10_000)
    assert.equal(flags.values['platform-service-node-port'], 30001)
    assert.equal(flags.values['secure-port'], 8443)
    assert.deepEqual([...flags.set], ['kvstore-servers', 'nodeagent-timeout', 'platform-service-node-port', 'secure-port'])
    assert.equal(flags.spelled.get('kvstore-servers'), 'etcd-servers')
    assert.equal(flags.spelled.get('secure-port'), 'secure-port')
  })

  it('reads shorthands: -h, and -v with its value joined, after = or next', () => {
    assert.equal(run(['-v', '3']).values.v, 3)
    assert.equal(run(['-v=4']).values.v, 4)
    assert.equal(run(['-v5']).values.v, 5)
    assert.equal(run(['--v=6']).values.v, 6)
    assert.deepEqual(parseCommandLine(['-hv2']), { action: 'help' })
    assert.equal(problem(['-x']), "unknown shorthand flag: 'x' in -x")
    assert.equal(problem(['-secure-port=1']), "unknown shorthand flag: 's' in -secure-port=1")
    assert.equal(problem(['-v']), "flag needs an argument: 'v' in -v")
    assert.equal(problem(['-verbose']), 'invalid argument "erbose" for "-v, --v" flag: must be a non-negative integer')
  })

  it('names the flag and the reason for a bad value, as pflag does', () => {
    assert.equal(problem(['--secure-port=https']), 'invalid argument "https" for "--secure-port" flag: must be an integer')
    assert.equal(problem(['--etcd-compaction-interval=5']), 'invalid argument "5" for "--etcd-compaction-interval" flag: time: invalid duration "5" (use Go syntax like 1m0s, 30s, 500ms)')
    assert.equal(problem(['--bind-address=localhost']), 'invalid argument "localhost" for "--bind-address" flag: failed to parse IP: "localhost"')
    assert.equal(problem(['--v=x']), 'invalid argument "x" for "-v, --v" flag: must be a non-negative integer')
    assert.equal(problem(['--feature-gates=A']), 'invalid argument "A" for "--feature-gates" flag: missing bool value for A')
  })

  it('refuses unknown flags, missing values and arguments', () => {
    assert.equal(problem(['--nope']), 'unknown flag: --nope')
    assert.equal(problem(['--secure-port=1', '--no-such-flag=1']), 'unknown flag: --no-such-flag')
    assert.equal(problem(['--cert-dir']), 'flag needs an argument: --cert-dir')
    assert.equal(problem(['serve']), '"apiserver" does not take any arguments, got ["serve"]')
    assert.equal(problem(['--', 'x']), '"apiserver" does not take any arguments, got ["x"]')
    assert.deepEqual(run(['--', '']).set.size, 0)
  })

  it('answers --help and -h before anything else is done', () => {
    for (const argv of [['--help'], ['-h'], ['--secure-port=1', '-h'], ['--help=true']]) assert.deepEqual(parseCommandLine(argv), { action: 'help' }, argv.join(' '))
    assert.equal(run(['--help=false']).values.help, false)
  })

  it('prints the version for --version and --version=raw, and sets it for --version=vX.Y.Z', () => {
    assert.deepEqual(parseCommandLine(['--version']), { action: 'version', raw: false, version: DEFAULT_VERSION })
    assert.deepEqual(parseCommandLine(['--version=true']), { action: 'version', raw: false, version: DEFAULT_VERSION })
    assert.deepEqual(parseCommandLine(['--version=raw']), { action: 'version', raw: true, version: DEFAULT_VERSION })
    assert.deepEqual(parseCommandLine(['--version=v1.30.1', '--version']), { action: 'version', raw: false, version: 'v1.30.1' })
    assert.equal(run(['--version=v1.31.2']).values.version, 'v1.31.2')
    assert.equal(run(['--version=false']).values.version, DEFAULT_VERSION)
    assert.equal(problem(['--version=1.2']), 'invalid argument "1.2" for "--version" flag: must be true, false, raw or a version like v1.32.0')
    assert.equal(problem(['--version=v1.2']), 'invalid argument "v1.2" for "--version" flag: must be a semantic version like v1.32.0')
  })
})
