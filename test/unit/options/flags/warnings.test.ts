import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseCommandLine, startupWarnings } from '../../../../core/options/flags/index.js'

function warningsFor(argv: string[]): string[] {
  const command = parseCommandLine(argv)
  if (command.action !== 'run') assert.fail(`expected run, got ${command.action}`)
  return startupWarnings(command.flags)
}

describe('start-up warnings', () => {
  it('say nothing for flags in effect, or when no flag is given', () => {
    assert.deepEqual(warningsFor([]), [])
    assert.deepEqual(warningsFor(['--secure-port=0', '--bind-address=127.0.0.1', '--anonymous-auth=false', '--request-timeout=30s', '--watch-cache=false']), [])
  })

  it('name each flag given that is accepted but not yet in effect, once, as the user spelled it', () => {
    assert.deepEqual(warningsFor(['--audit-log-path=/var/log/audit.log', '--etcd-servers=https://10.0.0.1:2379', '--etcd-db-metric-poll-interval=1m', '--audit-log-path=-']), [
      '--audit-log-path is accepted but not yet in effect: audit events are not recorded yet',
      '--etcd-db-metric-poll-interval is accepted but not yet in effect: the server exports no metrics yet',
    ])
  })

  it('name deprecated flags and values', () => {
    assert.deepEqual(warningsFor(['--admission-control=NamespaceLifecycle', '--enable-logs-handler', '--endpoint-reconciler-type=master-count']), [
      '--admission-control is deprecated: use --enable-admission-plugins or --disable-admission-plugins instead; it will be removed in a future version',
      '--admission-control is accepted but not yet in effect: admission plugins are not implemented yet',
      '--enable-logs-handler is deprecated: the log handler is deprecated and will be removed in a future version',
      '--enable-logs-handler is accepted but not yet in effect: there is no /logs endpoint',
      '--endpoint-reconciler-type=master-count is deprecated and will be removed in a future version; use lease',
    ])
  })

  it('name insecure cipher suites', () => {
    assert.deepEqual(warningsFor(['--tls-cipher-suites=TLS_AES_128_GCM_SHA256,TLS_RSA_WITH_RC4_128_SHA']), [
      '--tls-cipher-suites is accepted but not yet in effect: TLS uses the runtime defaults; this option is not applied yet',
      '--tls-cipher-suites: TLS_RSA_WITH_RC4_128_SHA is insecure',
    ])
  })
})
