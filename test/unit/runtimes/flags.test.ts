import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { FlagError, helpText, parseFlags } from '../../../runtimes/node/daemon/flags.js'
import { runToExit } from './run-to-exit.js'
import { type FlagName, flagSpec, parseCommandLine, unenforcedSecurityFlags } from '../../../core/options/flags/index.js'

const run = (argv: string[]) => runToExit(argv)

function flagsOf(argv: string[]) {
  const parsed = parseFlags(argv)
  assert.equal(parsed.action, 'run')
  return parsed.action === 'run' ? parsed.flags : assert.fail('not run')
}

/** What the flags make of core's options (core/options/apply-flags.ts). */
function optionsOf(argv: string[]) {
  const parsed = parseFlags(argv)
  return parsed.action === 'run' ? parsed.options : assert.fail('not run')
}

describe('daemon flags', () => {
  it('an unknown flag exits 1 naming it', async () => {
    const r = await run(['--secure-port=6443', '--no-such-flag=1'])
    assert.equal(r.code, 1)
    assert.match(r.stderr, /^Error: unknown flag: --no-such-flag\n/)
    assert.equal(r.stdout, '')
  })

  it('a malformed int exits 1 naming the flag and the reason', async () => {
    const r = await run(['--secure-port', 'https'])
    assert.equal(r.code, 1)
    assert.match(r.stderr, /invalid argument "https" for "--secure-port" flag: must be an integer/)
    assert.match((await run(['--min-request-timeout=1.5'])).stderr, /"--min-request-timeout" flag: must be an integer/)
    assert.match((await run(['--secure-port=70000'])).stderr, /^Error: --secure-port 70000 must be between 0 and 65535, inclusive \(0 picks a free port\)\n/)
  })

  it('a malformed duration exits 1 naming the flag', async () => {
    for (const bad of ['60', '1x', 'soon', '']) {
      const r = await run([`--request-timeout=${bad}`])
      assert.equal(r.code, 1, bad)
      assert.match(r.stderr, /invalid argument ".*" for "--request-timeout" flag: time: /, bad)
    }
    assert.match((await run(['--request-timeout=-1s'])).stderr, /^Error: --request-timeout can not be negative value\n/)
  })

  it('rejects other malformed values and forms', async () => {
    const cases: [string[], RegExp][] = [
      [['--anonymous-auth=maybe'], /"--anonymous-auth" flag: must be a boolean/],
      [['--bind-address=localhost'], /"--bind-address" flag: failed to parse IP/],
      [['--advertise-address', '300.1.1.1'], /"--advertise-address" flag/],
      [['--storage-backend=etcd2'], /--storage-backend invalid, allowed values: kvstore3 \(also spelled etcd3\)/],
      [['--cert-dir'], /flag needs an argument: --cert-dir/],
      [['-secure-port=1'], /unknown shorthand flag: 's' in -secure-port=1/],
      [['-x'], /unknown shorthand flag: 'x' in -x/],
      [['--anonymous-auth', 'false'], /does not take any arguments, got \["false"\]/],
      [['serve'], /does not take any arguments/],
      [['--tls-cert-file=a.crt'], /--tls-cert-file and --tls-private-key-file must be given together/],
      [['--version=1.2'], /"--version" flag/],
    ]
    for (const [argv, message] of cases) {
      const r = await run(argv)
      assert.equal(r.code, 1, argv.join(' '))
      assert.match(r.stderr, message, argv.join(' '))
    }
  })

  it('parses both value forms, booleans and defaults', () => {
    const defaults = flagsOf([])
    assert.equal(defaults.securePort, 6443)
    assert.equal(defaults.bindAddress, '0.0.0.0')
    assert.equal(defaults.certDir, '/var/run/platform')
    assert.equal(optionsOf([]).authentication?.anonymous, true)
    assert.equal(optionsOf([]).requestTimeoutMs, 60_000)
    assert.equal(optionsOf([]).minRequestTimeoutSeconds, 1800)

    const argv = [
      '--secure-port',
      '7443',
      '--bind-address=127.0.0.1',
      '--cert-dir=007',
      '--anonymous-auth=false',
      '--disable-http2-serving',
      '--request-timeout=1m30s',
      '--min-request-timeout',
      '60',
      '--storage-backend=etcd3',
      '--data-dir',
      '.apiserver/data',
      '--tls-cert-file=s.crt',
      '--tls-private-key-file=s.key',
      '--version=v1.31.2',
    ]
    const f = flagsOf(argv)
    const o = optionsOf(argv)
    assert.equal(f.securePort, 7443)
    assert.equal(f.bindAddress, '127.0.0.1')
    assert.equal(f.certDir, '007')
    assert.equal(o.authentication?.anonymous, false)
    assert.equal(f.disableHttp2Serving, true)
    assert.equal(o.requestTimeoutMs, 90_000)
    assert.equal(o.minRequestTimeoutSeconds, 60)
    assert.equal(f.storageBackend, 'etcd3')
    assert.equal(f.dataDir, '.apiserver/data')
    assert.equal(f.tlsCertFile, 's.crt')
    assert.equal(o.version, 'v1.31.2')
    // The last repeat wins, as with pflag.
    assert.equal(flagsOf(['--secure-port=1', '--secure-port=2']).securePort, 2)
  })

  it('--help prints sections and exits 0', async () => {
    for (const argv of [['--help'], ['-h'], ['--secure-port=1', '-h']]) {
      const r = await run(argv)
      assert.equal(r.code, 0)
      assert.match(r.stdout, /Usage:\n {2}apiserver \[flags\]/)
      assert.match(r.stdout, /Secure serving flags:\n\n +--bind-address ip +Address the secure port listens on/)
      assert.match(r.stdout, /--secure-port int +Port of the HTTPS endpoint/)
      assert.match(r.stdout, /\(default 6443\)/)
      assert.match(r.stdout, /Authentication flags:/)
    }
    assert.equal(helpText().includes('--token-auth-file string'), true)
  })

  it('--version prints the version and exits 0', async () => {
    assert.deepEqual(await run(['--version']), { code: 0, stdout: 'Kubernetes v1.32.0\n', stderr: '', listening: false })
    const raw = await run(['--version=raw'])
    assert.equal(JSON.parse(raw.stdout).gitVersion, 'v1.32.0')
    assert.equal(optionsOf(['--version=v1.30.1']).version, 'v1.30.1')
    assert.equal(optionsOf(['--version=false']).version, 'v1.32.0')
  })

  it('a malformed --token-auth-file stops start-up naming the file and line', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'apiserver-flags-'))
    try {
      const file = join(dir, 'tokens.csv')
      await writeFile(file, 'good,alice,1\nbad,bob\n')
      const r = await run(['--token-auth-file', file, '--cert-dir', join(dir, 'pki')])
      assert.equal(r.code, 1)
      assert.equal(r.stderr, `Error: ${file}: line 2: must have at least 3 columns (token, user name, user uid), found 2\n`)
      const missing = await run(['--token-auth-file', join(dir, 'none.csv'), '--cert-dir', join(dir, 'pki')])
      assert.match(missing.stderr, /^Error: --token-auth-file: cannot read .*none\.csv/)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('prints every problem of the command line at once, then exits 1', async () => {
    const r = await run(['--goaway-chance=0.5', '--tls-cert-file=a.crt', '--authorization-mode=RBAC,RBAC'])
    assert.equal(r.code, 1)
    assert.equal(
      r.stderr,
      [
        'Error: --goaway-chance can not be less than 0 or greater than 0.02',
        'Error: --tls-cert-file and --tls-private-key-file must be given together',
        'Error: authorization-mode ["RBAC" "RBAC"] has mode specified more than once',
        "Run 'apiserver --help' for usage.",
        '',
      ].join('\n'),
    )
  })

  it('reads the connection rate and the database size interval, 0 and 30s by default', () => {
    assert.equal(flagsOf([]).maxConnectionBytesPerSec, 0)
    assert.equal(optionsOf([]).storageSizePollMs, 30_000)
    const argv = ['--max-connection-bytes-per-sec=65536', '--etcd-db-metric-poll-interval=1m']
    assert.equal(flagsOf(argv).maxConnectionBytesPerSec, 65536)
    assert.equal(optionsOf(argv).storageSizePollMs, 60_000)
  })

  it("accepts kube-apiserver's spellings and every flag of the spec", () => {
    const f = optionsOf(['--etcd-servers=https://10.0.0.1:2379', '--kubelet-timeout=10s', '--audit-log-path=-', '--watch-cache=false', '--watch-cache-sizes=pods#0'])
    assert.equal(f.watchCache, false)
    assert.deepEqual(f.watchCacheSizes, { pods: 0 })
  })

  it('logs one warning at start-up for each flag given that is not yet in effect', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'apiserver-flags-'))
    try {
      const lines: string[] = []
      const { code } = await runToExit(
        ['--token-auth-file', join(dir, 'none.csv'), '--cert-dir', join(dir, 'pki'), '--etcd-db-metric-poll-interval=1m', '--contention-profiling', '--contention-profiling=true'],
        { logStream: { write: (line: string) => void lines.push(line) } },
      )
      assert.equal(code, 1)
      // The flags' warnings (the one about default admission plugins not built yet is tested with admission).
      const warnings = lines.map((l) => JSON.parse(l) as { level: number; msg: string }).filter((l) => l.level === 40 && l.msg.startsWith('--'))
      assert.deepEqual(
        warnings.map((w) => w.msg),
        // --etcd-db-metric-poll-interval is in effect: given next to it, it says nothing.
        ['--contention-profiling is accepted but not yet in effect: V8 has no lock-contention profile; the flag changes nothing'],
      )
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  // No security flag is refused today (KMS providers and automatic reload are in effect), so the
  // refusal is shown at the unit level: a flag whose status is refused stops start-up, named as spelled.
  it('refuses a security setting it does not enforce, naming it as the user spelled it', () => {
    const command = parseCommandLine(['--encryption-provider-config=e.yaml', '--encryption-provider-config-automatic-reload'])
    if (command.action !== 'run') assert.fail(command.action)
    const flags = command.flags
    assert.deepEqual(unenforcedSecurityFlags(flags), [], 'every security flag of the table is enforced')
    const refused = (name: FlagName) => (name === 'encryption-provider-config-automatic-reload' ? { status: 'refused' as const, pending: 'not built' } : flagSpec(name))
    assert.deepEqual(unenforcedSecurityFlags(flags, refused), [
      '--encryption-provider-config-automatic-reload: not enforced by this server yet (not built); refusing to start rather than ignore a security setting',
    ])
  })

  it("reads envtest's command line (--name=value, sorted) and kube-api-test's (separate words, repeats, a bare --allow-privileged last)", () => {
    const envtestArgv = [
      '--allow-privileged=true',
      '--authorization-mode=RBAC',
      '--bind-address=127.0.0.1',
      '--cert-dir=/certs',
      '--client-ca-file=/certs/client-cert-auth-ca.crt',
      '--disable-admission-plugins=ServiceAccount',
      '--etcd-servers=http://127.0.0.1:2379',
      '--secure-port=6443',
      '--service-account-issuer=https://127.0.0.1:6443/',
      '--service-account-key-file=/certs/sa-signer.crt',
      '--service-account-signing-key-file=/certs/sa-signer.key',
      '--service-cluster-ip-range=10.0.0.0/24',
    ]
    const envtest = flagsOf(envtestArgv)
    const envtestOptions = optionsOf(envtestArgv)
    assert.equal(envtestOptions.allowPrivileged, true)
    assert.deepEqual(envtestOptions.authorizationModes, ['RBAC'])
    assert.equal(envtest.clientCaFile, '/certs/client-cert-auth-ca.crt')
    assert.deepEqual(envtestOptions.authentication?.serviceAccounts && envtestOptions.authentication.serviceAccounts.issuers, ['https://127.0.0.1:6443/'])
    assert.deepEqual(envtest.serviceAccounts.keyFiles, ['/certs/sa-signer.crt'])
    assert.deepEqual(envtestOptions.serviceClusterIPRange, ['10.0.0.0/24'])

    const kubeApiTestArgv = [
      '--cert-dir', '/home/u/.kubeapitest',
      '--secure-port', '40000',
      '--etcd-servers', 'http://0.0.0.0:2379',
      '--authorization-mode', 'RBAC',
      '--service-account-issuer', 'https://localhost',
      '--service-account-signing-key-file', '/home/u/.kubeapitest/apiserver.key',
      '--service-account-signing-key-file', '/home/u/.kubeapitest/apiserver.key',
      '--service-account-key-file', '/home/u/.kubeapitest/apiserver.key',
      '--service-account-issuer', '/home/u/.kubeapitest/apiserver.crt',
      '--disable-admission-plugins', 'ServiceAccount',
      '--client-ca-file', '/home/u/.kubeapitest/client.crt',
      '--service-cluster-ip-range', '10.0.0.0/24',
      '--allow-privileged',
    ]
    const kubeApiTest = flagsOf(kubeApiTestArgv)
    const kubeApiTestOptions = optionsOf(kubeApiTestArgv)
    assert.equal(kubeApiTest.securePort, 40000)
    assert.equal(kubeApiTest.bindAddress, '0.0.0.0')
    assert.equal(kubeApiTestOptions.allowPrivileged, true)
    // Issuers accumulate in order (the first signs); a path is an issuer too, as upstream takes one without ':'.
    assert.deepEqual(kubeApiTestOptions.authentication?.serviceAccounts && kubeApiTestOptions.authentication.serviceAccounts.issuers, ['https://localhost', '/home/u/.kubeapitest/apiserver.crt'])
    assert.equal(kubeApiTest.serviceAccounts.signingKeyFile, '/home/u/.kubeapitest/apiserver.key')
    // envtest passes --insecure-port=0 only to a server whose help lists it: upstream removed it in 1.24, and so has this help.
    assert.doesNotMatch(helpText(), /^\s*--insecure-port\b/m)
  })

  it('FlagError is what parseFlags throws', () => {
    assert.throws(() => parseFlags(['--nope']), FlagError)
  })
})
