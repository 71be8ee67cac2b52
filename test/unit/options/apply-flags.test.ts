/** The flags' values onto ApiServerOptions in one step (core/options/apply-flags.ts). */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { applyFlags } from '../../../core/options/apply-flags.js'
import { readCommandLine } from '../../../core/options/flags/index.js'

function optionsOf(argv: string[]) {
  const command = readCommandLine(argv)
  return command.action === 'run' ? applyFlags(command.flags.values) : assert.fail('not run')
}

describe('applyFlags', () => {
  it('maps the defaults: AlwaysAllow, anonymous requests, the default node port range, the advertised loopback', () => {
    const options = optionsOf([])
    assert.deepEqual(options.authorizationModes, ['AlwaysAllow'])
    assert.equal(options.authentication?.anonymous, true)
    assert.equal(options.authentication?.clientCertificates, true)
    assert.equal(options.authentication?.requestHeader, undefined)
    assert.deepEqual(options.serviceNodePortRange, { first: 30000, last: 32767 })
    assert.equal(options.advertiseAddress, '127.0.0.1')
    assert.equal(options.storagePrefix, '/registry')
    assert.equal(options.bootstrapRbacPolicy, true)
    assert.equal(options.nodes, undefined)
  })

  it('compresses large answers unless --feature-gates=APIResponseCompression=false, as upstream by default since 1.16', () => {
    assert.equal(optionsOf([]).serving?.responseCompression, true)
    assert.equal(optionsOf(['--feature-gates=APIResponseCompression=false']).serving?.responseCompression, false)
  })

  it('hands each flag on to its option', () => {
    const options = optionsOf([
      '--authorization-mode=Node,RBAC',
      '--anonymous-auth=false',
      '--service-account-issuer=https://a.example',
      '--service-account-max-token-expiration=2h',
      '--api-audiences=x,y',
      '--service-account-signing-key-file=sa.key',
      '--service-account-key-file=sa.pub',
      '--bind-address=10.0.0.5',
      '--external-hostname=api.example',
      '--kvstore-prefix=custom/',
      '--simulated-nodes=3',
      '--runtime-config=api/alpha=true,batch/v1=',
      '--watch-cache-sizes=pods#0',
      '--enable-aggregator-routing',
      '--disabled-metrics=apiserver_request_total',
    ])
    assert.deepEqual(options.authorizationModes, ['Node', 'RBAC'])
    assert.equal(options.authentication?.anonymous, false)
    const serviceAccounts = options.authentication?.serviceAccounts
    assert.ok(serviceAccounts)
    assert.deepEqual(serviceAccounts.issuers, ['https://a.example'])
    assert.equal(serviceAccounts.maxExpirationSeconds, 7200)
    assert.deepEqual(options.authentication?.apiAudiences, ['x', 'y'])
    assert.equal(options.advertiseAddress, '10.0.0.5')
    assert.equal(options.externalHostname, 'api.example')
    assert.equal(options.storagePrefix, '/custom')
    assert.equal(options.nodes, 3)
    assert.deepEqual(options.runtimeConfig, { 'api/alpha': true, 'batch/v1': true })
    assert.deepEqual(options.watchCacheSizes, { pods: 0 })
    assert.equal(options.aggregation?.enableAggregatorRouting, true)
    assert.deepEqual(options.metrics?.disabled, ['apiserver_request_total'])
  })

  it("sets the authenticating proxy's headers only with its CA file, whose bundle the runtime adds", () => {
    const options = optionsOf(['--requestheader-client-ca-file=proxy-ca.crt', '--requestheader-username-headers=X-Remote-User'])
    assert.deepEqual(options.authentication?.requestHeader?.usernameHeaders, ['X-Remote-User'])
    assert.equal(options.authentication?.requestHeader?.clientCA, undefined)
  })

  it('leaves --event-ttl to etcd when the store is shared', () => {
    assert.equal(optionsOf(['--event-ttl=5m']).eventTtlMs, 300_000)
    assert.equal(optionsOf(['--kvstore-servers=http://127.0.0.1:2379']).eventTtlMs, undefined)
  })
})
