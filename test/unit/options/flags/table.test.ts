import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { defaultValues, FLAGS, flagSpec } from '../../../../core/options/flags/index.js'

describe('the flag table', () => {
  it("holds the spec's 169 flags and the project's --controllers, --data-dir, --simulated-nodes and --workers, each once", () => {
    assert.equal(FLAGS.length, 173)
    const names = FLAGS.flatMap((f) => [f.name, ...(f.aliases ?? [])])
    assert.equal(new Set(names).size, names.length, 'no name or alias is used twice')
    assert.deepEqual(
      FLAGS.filter((f) => f.extension).map((f) => f.name).sort(),
      ['controllers', 'data-dir', 'simulated-nodes', 'workers'],
    )
  })

  it('marks as in effect exactly the flags the server acts on today', () => {
    assert.deepEqual(FLAGS.filter((f) => f.status === 'active').map((f) => f.name).sort(), [
      'admission-control',
      'admission-control-config-file',
      'advertise-address',
      'aggregator-reject-forwarding-redirect',
      'allow-metric-labels',
      'allow-metric-labels-manifest',
      'allow-privileged',
      'anonymous-auth',
      'api-audiences',
      'audit-log-batch-buffer-size',
      'audit-log-batch-max-size',
      'audit-log-batch-max-wait',
      'audit-log-batch-throttle-burst',
      'audit-log-batch-throttle-enable',
      'audit-log-batch-throttle-qps',
      'audit-log-compress',
      'audit-log-format',
      'audit-log-maxage',
      'audit-log-maxbackup',
      'audit-log-maxsize',
      'audit-log-mode',
      'audit-log-path',
      'audit-log-truncate-enabled',
      'audit-log-truncate-max-batch-size',
      'audit-log-truncate-max-event-size',
      'audit-log-version',
      'audit-policy-file',
      'audit-webhook-batch-buffer-size',
      'audit-webhook-batch-max-size',
      'audit-webhook-batch-max-wait',
      'audit-webhook-batch-throttle-burst',
      'audit-webhook-batch-throttle-enable',
      'audit-webhook-batch-throttle-qps',
      'audit-webhook-config-file',
      'audit-webhook-initial-backoff',
      'audit-webhook-mode',
      'audit-webhook-truncate-enabled',
      'audit-webhook-truncate-max-batch-size',
      'audit-webhook-truncate-max-event-size',
      'audit-webhook-version',
      'authentication-config',
      'authentication-token-webhook-cache-ttl',
      'authentication-token-webhook-config-file',
      'authentication-token-webhook-version',
      'authorization-config',
      'authorization-mode',
      'authorization-policy-file',
      'authorization-webhook-cache-authorized-ttl',
      'authorization-webhook-cache-unauthorized-ttl',
      'authorization-webhook-config-file',
      'authorization-webhook-version',
      'bind-address',
      'cert-dir',
      'client-ca-file',
      'controllers',
      'coordinated-leadership-lease-duration',
      'coordinated-leadership-renew-deadline',
      'coordinated-leadership-retry-period',
      'cors-allowed-origins',
      'data-dir',
      'debug-socket-path',
      'default-not-ready-toleration-seconds',
      'default-unreachable-toleration-seconds',
      'delete-collection-workers',
      'disable-admission-plugins',
      'disable-http2-serving',
      'disabled-metrics',
      'egress-selector-config-file',
      'emulated-version',
      'emulation-forward-compatible',
      'enable-admission-plugins',
      'enable-aggregator-routing',
      'enable-bootstrap-token-auth',
      'enable-garbage-collector',
      'enable-logs-handler',
      'enable-priority-and-fairness',
      'encryption-provider-config',
      'encryption-provider-config-automatic-reload',
      'endpoint-reconciler-type',
      'event-ttl',
      'external-hostname',
      'feature-gates',
      'goaway-chance',
      'help',
      'http2-max-streams-per-connection',
      'kvstore-cafile',
      'kvstore-certfile',
      'kvstore-compaction-interval',
      'kvstore-count-metric-poll-period',
      'kvstore-db-metric-poll-interval',
      'kvstore-healthcheck-timeout',
      'kvstore-keyfile',
      'kvstore-prefix',
      'kvstore-readycheck-timeout',
      'kvstore-servers',
      'kvstore-servers-overrides',
      'lease-reuse-duration-seconds',
      'livez-grace-period',
      'log-flush-frequency',
      'log-text-info-buffer-size',
      'log-text-split-stream',
      'logging-format',
      'max-connection-bytes-per-sec',
      'max-mutating-requests-inflight',
      'max-requests-inflight',
      'min-compatibility-version',
      'min-request-timeout',
      'nodeagent-certificate-authority',
      'nodeagent-client-certificate',
      'nodeagent-client-key',
      'nodeagent-preferred-address-types',
      'nodeagent-timeout',
      'oidc-ca-file',
      'oidc-client-id',
      'oidc-groups-claim',
      'oidc-groups-prefix',
      'oidc-issuer-url',
      'oidc-required-claim',
      'oidc-signing-algs',
      'oidc-username-claim',
      'oidc-username-prefix',
      'peer-advertise-ip',
      'peer-advertise-port',
      'peer-ca-file',
      'permit-address-sharing',
      'permit-port-sharing',
      'platform-service-node-port',
      'profiling',
      'proxy-client-cert-file',
      'proxy-client-key-file',
      'request-timeout',
      'requestheader-allowed-names',
      'requestheader-client-ca-file',
      'requestheader-extra-headers-prefix',
      'requestheader-group-headers',
      'requestheader-uid-headers',
      'requestheader-username-headers',
      'runtime-config',
      'runtime-config-emulation-forward-compatible',
      'secure-port',
      'service-account-extend-token-expiration',
      'service-account-issuer',
      'service-account-jwks-uri',
      'service-account-key-file',
      'service-account-lookup',
      'service-account-max-token-expiration',
      'service-account-signing-endpoint',
      'service-account-signing-key-file',
      'service-cluster-ip-range',
      'service-node-port-range',
      'show-hidden-metrics-for-version',
      'shutdown-delay-duration',
      'shutdown-send-retry-after',
      'shutdown-watch-termination-grace-period',
      'simulated-nodes',
      'storage-backend',
      'storage-initialization-timeout',
      'storage-media-type',
      'strict-transport-security-directives',
      'tls-cert-file',
      'tls-cipher-suites',
      'tls-min-version',
      'tls-private-key-file',
      'tls-sni-cert-key',
      'token-auth-file',
      'tracing-config-file',
      'v',
      'version',
      'vmodule',
      'watch-cache',
      'watch-cache-sizes',
      'workers',
    ])
  })

  it('says why each pending or refused flag is not in effect yet', () => {
    for (const f of FLAGS) {
      if (f.status !== 'active') assert.ok(f.pending, `--${f.name} has a reason`)
      else assert.equal(f.pending, undefined, `--${f.name} is active and has no reason`)
    }
  })

  it('refuses, never merely warns about, every security setting not in effect (authentication, authorization, admission, audit, encryption)', () => {
    const security = new Set(['Authentication', 'Authorization', 'Admission', 'Auditing'])
    for (const f of FLAGS) {
      if (security.has(f.section) || f.name.startsWith('encryption-provider-config')) assert.notEqual(f.status, 'pending', `--${f.name}`)
    }
  })

  it('accepts the upstream spelling of every renamed flag', () => {
    for (const f of FLAGS) {
      if (f.name.startsWith('kvstore-')) assert.deepEqual(f.aliases, [f.name.replace('kvstore-', 'etcd-')])
      if (f.name.startsWith('nodeagent-')) assert.deepEqual(f.aliases, [f.name.replace('nodeagent-', 'kubelet-')])
    }
    assert.deepEqual(flagSpec('platform-service-node-port').aliases, ['kubernetes-service-node-port'])
  })

  it('gives fresh default values that a caller may change', () => {
    const a = defaultValues()
    a['oidc-signing-algs'].push('ES256')
    assert.deepEqual(defaultValues()['oidc-signing-algs'], ['RS256'])
  })
})
