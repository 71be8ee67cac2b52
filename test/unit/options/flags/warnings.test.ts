import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseCommandLine, startupWarnings, unenforcedSecurityFlags } from '../../../../core/options/flags/index.js'

function parsed(argv: string[]) {
  const command = parseCommandLine(argv)
  if (command.action !== 'run') assert.fail(`expected run, got ${command.action}`)
  return command.flags
}

const warningsFor = (argv: string[]): string[] => startupWarnings(parsed(argv))


describe('start-up warnings', () => {
  it('say nothing for flags in effect, or when no flag is given', () => {
    assert.deepEqual(warningsFor([]), [])
    assert.deepEqual(warningsFor(['--secure-port=0', '--bind-address=127.0.0.1', '--anonymous-auth=false', '--request-timeout=30s', '--watch-cache=false']), [])
  })

  it('name each flag given that is accepted but not yet in effect, once, as the user spelled it', () => {
    assert.deepEqual(warningsFor(['--contention-profiling', '--etcd-servers=https://10.0.0.1:2379', '--etcd-db-metric-poll-interval=1m', '--contention-profiling=true']), [
      '--contention-profiling is accepted but not yet in effect: V8 has no lock-contention profile; the flag changes nothing',
    ])
  })

  it('name deprecated flags and values', () => {
    assert.deepEqual(warningsFor(['--admission-control=NamespaceLifecycle', '--enable-logs-handler', '--endpoint-reconciler-type=master-count']), [
      '--admission-control is deprecated: Use --enable-admission-plugins or --disable-admission-plugins instead. Will be removed in a future version.',
      '--enable-logs-handler is deprecated: the log handler is deprecated and will be removed in a future version',
      '--endpoint-reconciler-type=master-count is deprecated and will be removed in a future version; use lease',
    ])
  })

  it('name a gate set on the command line that is deprecated or GA at the version, as upstream warns', () => {
    assert.deepEqual(warningsFor(['--feature-gates=KMSv1=true,StructuredAuthorizationConfiguration=true,APIServerIdentity=false']), [
      'Setting deprecated feature gate KMSv1=true. It will be removed in a future release.',
      'Setting GA feature gate StructuredAuthorizationConfiguration=true. It will be removed in a future release.',
    ])
    assert.deepEqual(warningsFor(['--emulated-version=1.31', '--feature-gates=StructuredAuthorizationConfiguration=false']), [])
  })

  it('name insecure cipher suites', () => {
    assert.deepEqual(warningsFor(['--tls-cipher-suites=TLS_AES_128_GCM_SHA256,TLS_RSA_WITH_RC4_128_SHA']), [
      '--tls-cipher-suites: TLS_RSA_WITH_RC4_128_SHA is insecure',
    ])
  })
})

describe('security settings the server does not enforce yet', () => {
  const refusalsFor = (argv: string[]): string[] => unenforcedSecurityFlags(parsed(argv))

  it('leave --encryption-provider-config-automatic-reload alone: reloading is in effect', () => {
    assert.deepEqual(refusalsFor(['--encryption-provider-config=e.yaml', '--encryption-provider-config-automatic-reload']), [])
  })

  it('accept every authorization mode of the spec, all of them enforced', () => {
    assert.deepEqual(refusalsFor(['--authorization-mode=Node,RBAC']), [])
    assert.deepEqual(refusalsFor(['--authorization-mode=RBAC']), [])
    assert.deepEqual(refusalsFor(['--authorization-mode=AlwaysAllow']), [])
    assert.deepEqual(refusalsFor(['--authorization-mode=AlwaysDeny,AlwaysAllow']), [])
    assert.deepEqual(refusalsFor(['--authorization-mode=Node,ABAC,Webhook', '--authorization-policy-file=p.jsonl', '--authorization-webhook-config-file=w.kubeconfig']), [])
  })

  it('leave the security flags that are in effect alone', () => {
    assert.deepEqual(refusalsFor(['--anonymous-auth=false', '--client-ca-file=ca.crt', '--token-auth-file=tokens.csv', '--audit-webhook-config-file=w.kubeconfig']), [])
  })
})
