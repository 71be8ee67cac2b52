import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { authorizationModes, parseCommandLine, validateFlags } from '../../../../core/options/flags/index.js'

function problems(argv: string[]): string[] {
  const command = parseCommandLine(argv)
  if (command.action !== 'run') assert.fail(`expected run, got ${command.action}`)
  return validateFlags(command.flags)
}

interface RuleCase {
  rule: string
  refused: string[]
  says: string[]
  accepted: string[]
}

/** Each rule with a command line it refuses (and exactly what the user reads) and one it accepts. */
const CASES: RuleCase[] = [
  // Serving
  {
    rule: '--secure-port is a port; 0 picks a free one',
    refused: ['--secure-port=70000'],
    says: ['--secure-port 70000 must be between 0 and 65535, inclusive (0 picks a free port)'],
    accepted: ['--secure-port=0'],
  },
  {
    rule: 'limits and time-outs may not be negative',
    refused: ['--request-timeout=-1s', '--max-requests-inflight=-1', '--livez-grace-period=-1s', '--shutdown-watch-termination-grace-period=-2s'],
    says: [
      '--livez-grace-period can not be a negative value',
      '--max-requests-inflight can not be negative value',
      '--request-timeout can not be negative value',
      '--shutdown-watch-termination-grace-period, if provided, can not be a negative value',
    ],
    accepted: ['--request-timeout=0', '--max-requests-inflight=0', '--max-mutating-requests-inflight=1'],
  },
  {
    rule: '--controllers names only controllers the server has',
    refused: ['--controllers=*,nodelifecycle'],
    says: [
      '--controllers: "nodelifecycle" is not in the list of known controllers (known: cronjob, daemonset, deployment, endpoint, endpointslice, endpointslicemirroring, horizontalpodautoscaling, job, podgc, replicaset, replicationcontroller, root-ca-cert-publisher, statefulset, ttl-after-finished)',
    ],
    accepted: ['--controllers=*,-cronjob', '--controllers=deployment,replicaset'],
  },
  {
    rule: '--simulated-nodes is 0 or more',
    refused: ['--simulated-nodes=-2'],
    says: ['--simulated-nodes must be at least 0, not -2'],
    accepted: ['--simulated-nodes=3', '--controllers=*'],
  },
  {
    rule: '--workers is 1 or more, on etcd or the embedded store',
    refused: ['--workers=0'],
    says: ['--workers 0 must be 1 or more'],
    accepted: ['--workers=2'],
  },
  {
    rule: '--goaway-chance is between 0 and 0.02',
    refused: ['--goaway-chance=0.05'],
    says: ['--goaway-chance can not be less than 0 or greater than 0.02'],
    accepted: ['--goaway-chance=0.001'],
  },
  {
    rule: 'priority and fairness needs a positive total concurrency',
    refused: ['--max-requests-inflight=0', '--max-mutating-requests-inflight=0'],
    says: [
      '--max-requests-inflight (0) and --max-mutating-requests-inflight (0) must add up to a positive total concurrency limit while --enable-priority-and-fairness is true',
    ],
    accepted: ['--max-requests-inflight=0', '--max-mutating-requests-inflight=0', '--enable-priority-and-fairness=false'],
  },
  {
    rule: 'HSTS directives follow RFC 6797',
    refused: ['--strict-transport-security-directives=max-age=1,preload,always'],
    says: [
      '--strict-transport-security-directives invalid, allowed values: max-age=expireTime, includeSubDomains, preload. see https://tools.ietf.org/html/rfc6797#section-6.1 for more information',
    ],
    accepted: ['--strict-transport-security-directives=max-age=31536000,includeSubDomains,preload'],
  },
  {
    rule: 'CORS origins are valid expressions pinned to the whole host',
    refused: ['--cors-allowed-origins=example.com,//a(,^https://(?!evil)[a-z]+$', '--cors-allowed-origins='],
    says: [
      '--cors-allowed-origins has an invalid regular expression: "example.com" does not pin to start/end of host in the origin header',
      '--cors-allowed-origins has an invalid regular expression: "//a(" does not compile',
      '--cors-allowed-origins has an invalid regular expression: "^https://(?!evil)[a-z]+$" does not compile',
    ],
    accepted: ['--cors-allowed-origins=//example\\.com(:|$),^https://example\\.org$,(?i)^https://EXAMPLE\\.net\\z'],
  },
  {
    rule: 'the serving certificate and key come together',
    refused: ['--tls-cert-file=a.crt'],
    says: ['--tls-cert-file and --tls-private-key-file must be given together'],
    accepted: ['--tls-cert-file=a.crt', '--tls-private-key-file=a.key'],
  },
  {
    rule: '--tls-min-version is one of the four TLS versions',
    refused: ['--tls-min-version=TLS1.2'],
    says: ['--tls-min-version: Unsupported value: "TLS1.2": supported values: "VersionTLS10", "VersionTLS11", "VersionTLS12", "VersionTLS13"'],
    accepted: ['--tls-min-version=VersionTLS13'],
  },
  {
    rule: '--tls-cipher-suites names known suites',
    refused: ['--tls-cipher-suites=TLS_AES_128_GCM_SHA256,TLS_NOPE'],
    says: ["--tls-cipher-suites: Cipher suite TLS_NOPE not supported or doesn't exist"],
    accepted: ['--tls-cipher-suites=TLS_AES_128_GCM_SHA256,TLS_RSA_WITH_AES_128_CBC_SHA'],
  },
  // Persistence
  {
    rule: '--storage-backend is kvstore3 (or etcd3)',
    refused: ['--storage-backend=etcd2'],
    says: ["--storage-backend invalid, allowed values: kvstore3 (also spelled etcd3). If not specified, it will default to 'kvstore3'"],
    accepted: ['--storage-backend=etcd3'],
  },
  {
    rule: '--storage-media-type is JSON, YAML or protobuf',
    refused: ['--storage-media-type=application/cbor'],
    says: ['--storage-media-type "application/cbor" invalid, allowed values: application/json, application/vnd.kubernetes.protobuf, application/yaml'],
    accepted: ['--storage-media-type=application/json'],
  },
  {
    rule: 'each --kvstore-servers entry is scheme://host:port',
    refused: ['--kvstore-servers=10.0.0.1:2379,ftp://a:1,https://a'],
    says: [
      '--kvstore-servers: "10.0.0.1:2379" is not a URL',
      '--kvstore-servers: "ftp://a:1" has scheme "ftp"; use http, https, unix or unixs',
      '--kvstore-servers: "https://a" must have the form scheme://host:port',
    ],
    accepted: ['--etcd-servers=https://10.0.0.1:2379,http://[::1]:2379,unix:///run/etcd.sock'],
  },
  {
    rule: '--kvstore-servers-overrides entries are group/resource#url;url',
    refused: ['--kvstore-servers-overrides=/events/http://127.0.0.1:4002,/pods#https://a:1;b'],
    says: [
      '--kvstore-servers-overrides invalid, must be of format: group/resource#servers, where servers are URLs, semicolon separated',
      '--kvstore-servers-overrides: "b" in "/pods#https://a:1;b" is not a URL',
    ],
    accepted: ['--kvstore-servers-overrides=/events#https://10.0.0.5:2379;https://10.0.0.6:2379,apps/deployments#http://a:2379'],
  },
  {
    rule: 'automatic reload needs an encryption configuration',
    refused: ['--encryption-provider-config-automatic-reload'],
    says: ['--encryption-provider-config-automatic-reload must be set with --encryption-provider-config'],
    accepted: ['--encryption-provider-config-automatic-reload', '--encryption-provider-config=enc.yaml'],
  },
  {
    rule: '--watch-cache-sizes entries are resource[.group]#size',
    refused: ['--watch-cache-sizes=pods#0,deployments.apps', '--watch-cache-sizes=nodes#x'],
    says: ['--watch-cache-sizes: invalid value of watch cache size: deployments.apps'],
    accepted: ['--watch-cache-sizes=pods#0,deployments.apps#100'],
  },
  // Auditing
  {
    rule: 'a log backend that is on has valid settings',
    refused: ['--audit-log-path=-', '--audit-log-mode=async', '--audit-log-format=xml', '--audit-log-maxage=-1', '--audit-log-version=audit.k8s.io/v1beta1'],
    says: [
      'invalid audit log mode async, allowed modes are "batch,blocking,blocking-strict"',
      '--audit-log-version: invalid group version "audit.k8s.io/v1beta1", allowed versions are ["audit.k8s.io/v1"]',
      'invalid audit log format xml, allowed formats are "legacy,json"',
      "--audit-log-maxage -1 can't be a negative number",
    ],
    accepted: ['--audit-log-path=-', '--audit-log-mode=blocking-strict', '--audit-log-format=legacy', '--audit-log-maxage=30'],
  },
  {
    rule: 'a backend in batch mode needs positive sizes, and truncation a batch as big as an event',
    refused: ['--audit-webhook-config-file=hook.yaml', '--audit-webhook-batch-max-size=0', '--audit-webhook-batch-throttle-qps=0', '--audit-webhook-truncate-max-batch-size=10'],
    says: [
      'invalid audit batch webhook max batch size 0, must be a positive number',
      'invalid audit batch webhook throttle QPS 0, must be a positive number',
      'invalid audit truncate webhook max batch size 10, must be greater than max event size (102400)',
    ],
    accepted: ['--audit-webhook-config-file=hook.yaml', '--audit-webhook-batch-throttle-enable=false', '--audit-webhook-batch-throttle-qps=0'],
  },
  {
    rule: 'a backend that is off is not checked, as upstream',
    refused: ['--audit-log-path=/var/log/audit.log', '--audit-log-mode=nope'],
    says: ['invalid audit log mode nope, allowed modes are "batch,blocking,blocking-strict"'],
    accepted: ['--audit-log-mode=nope'],
  },
  // Authentication
  {
    rule: 'OIDC needs an https issuer and a client ID',
    refused: ['--oidc-username-claim=email'],
    says: ['oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set'],
    accepted: ['--oidc-issuer-url=https://issuer.example.com', '--oidc-client-id=kubernetes'],
  },
  {
    rule: 'the OIDC issuer is https and the signing algorithms are known',
    refused: ['--oidc-issuer-url=http://issuer.example.com', '--oidc-client-id=k', '--oidc-signing-algs=RS256,HS256'],
    says: [
      '--oidc-issuer-url: Invalid value: "http://issuer.example.com": URL scheme must be https',
      '--oidc-signing-algs: Unsupported value: "HS256": supported values: "RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256", "PS384", "PS512"',
    ],
    accepted: ['--oidc-issuer-url=https://issuer.example.com', '--oidc-client-id=k', '--oidc-signing-algs=RS256,ES384,PS512'],
  },
  {
    rule: 'the --oidc-* checks are left to the file when --authentication-config is given',
    refused: ['--authentication-config=authn.yaml', '--feature-gates=StructuredAuthenticationConfiguration=false'],
    says: ['set --feature-gates=StructuredAuthenticationConfiguration=true to use authentication-config file'],
    accepted: ['--authentication-config=authn.yaml', '--oidc-username-claim=email'],
  },
  {
    rule: 'service account issuers are URLs when they look like one, and not repeated',
    refused: ['--service-account-issuer=https://a', '--service-account-issuer=https://a', '--service-account-issuer=', '--service-account-signing-key-file=sa.key', '--service-account-key-file=sa.pub'],
    says: ['service-account-issuer "https://a" is already specified', 'service-account-issuer should not be an empty string'],
    accepted: ['--service-account-issuer=https://kubernetes.default.svc', '--service-account-issuer=api', '--service-account-signing-key-file=sa.key', '--service-account-key-file=sa.pub'],
  },
  {
    rule: 'the key set URI is https',
    refused: ['--service-account-jwks-uri=http://example.com/keys'],
    says: ['service-account-jwks-uri requires https scheme, parsed as: http://example.com/keys'],
    accepted: ['--service-account-jwks-uri=https://example.com/keys'],
  },
  {
    rule: 'an external signer excludes key files and needs its gate',
    refused: ['--service-account-signing-endpoint=/run/signer.sock', '--service-account-key-file=sa.pub', '--service-account-issuer=https://a'],
    says: [
      "can't set `--service-account-signing-key-file` and/or `--service-account-key-file` with `--service-account-signing-endpoint` (They are mutually exclusive)",
      'setting `--service-account-signing-endpoint` requires enabling ExternalServiceAccountTokenSigner feature gate',
    ],
    accepted: ['--service-account-signing-endpoint=/run/signer.sock', '--service-account-issuer=https://a', '--feature-gates=ExternalServiceAccountTokenSigner=true'],
  },
  {
    rule: 'a signing key needs verification key files',
    refused: ['--service-account-signing-key-file=sa.key', '--service-account-issuer=https://a'],
    says: ['--service-account-key-file must be specified when --service-account-signing-key-file is provided'],
    accepted: ['--service-account-signing-key-file=sa.key', '--service-account-key-file=sa.pub', '--service-account-issuer=https://a'],
  },
  {
    rule: 'token issuing needs the signer and the issuer together',
    refused: ['--api-audiences=api'],
    says: ['--service-account-signing-key-file, --service-account-issuer, and --api-audiences should be specified together'],
    accepted: ['--api-audiences=api', '--service-account-issuer=https://a', '--service-account-signing-key-file=sa.key', '--service-account-key-file=sa.key'],
  },
  {
    rule: 'a cap on token lifetimes lies between an hour and 2^32 seconds',
    refused: ['--service-account-max-token-expiration=59m'],
    says: ['the service-account-max-token-expiration must be between 1 hour and 2^32 seconds'],
    accepted: ['--service-account-max-token-expiration=1h'],
  },
  {
    rule: 'request header lists have no blank entries, and UID headers need their gate',
    refused: ['--requestheader-username-headers=X-Remote-User, ', '--requestheader-uid-headers=X-Remote-Uid'],
    says: ['empty value in "requestheader-username-headers"', '--requestheader-uid-headers requires the "RemoteRequestHeaderUID" feature to be enabled'],
    accepted: ['--requestheader-username-headers=X-Remote-User', '--requestheader-uid-headers=X-Remote-Uid', '--feature-gates=RemoteRequestHeaderUID=true'],
  },
  {
    rule: 'webhook versions are v1 or v1beta1',
    refused: ['--authentication-token-webhook-version=v2', '--authorization-webhook-version=v1alpha1'],
    says: [
      '--authentication-token-webhook-version: Unsupported value: "v2": supported values: "v1", "v1beta1"',
      '--authorization-webhook-version: Unsupported value: "v1alpha1": supported values: "v1", "v1beta1"',
    ],
    accepted: ['--authentication-token-webhook-version=v1', '--authorization-webhook-version=v1'],
  },
  {
    rule: 'the proxy client certificate and key come together',
    refused: ['--proxy-client-key-file=proxy.key'],
    says: ['--proxy-client-cert-file and --proxy-client-key-file must be given together'],
    accepted: ['--proxy-client-key-file=proxy.key', '--proxy-client-cert-file=proxy.crt'],
  },
  // Authorization
  {
    rule: '--authorization-config excludes the mode and webhook flags the user gave',
    refused: ['--authorization-config=authz.yaml', '--authorization-webhook-version=v1'],
    says: ['--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined'],
    accepted: ['--authorization-config=authz.yaml'],
  },
  {
    rule: '--authorization-config needs its gate (which 1.32 locks on; 1.31 lets it be turned off)',
    refused: ['--authorization-config=authz.yaml', '--emulated-version=1.31', '--feature-gates=StructuredAuthorizationConfiguration=false'],
    says: ['--authorization-config cannot be used without enabling StructuredAuthorizationConfiguration feature flag'],
    accepted: ['--authorization-config=authz.yaml', '--feature-gates=StructuredAuthorizationConfiguration=true'],
  },
  {
    rule: 'a gate locked to its default cannot be set against it',
    refused: ['--feature-gates=StructuredAuthorizationConfiguration=false'],
    says: ['cannot set feature gate StructuredAuthorizationConfiguration to false, feature is locked to true'],
    accepted: ['--emulated-version=1.31', '--feature-gates=StructuredAuthorizationConfiguration=false'],
  },
  {
    rule: 'a gate is set only at a version that has it',
    refused: ['--emulated-version=1.31', '--feature-gates=RemoteRequestHeaderUID=true'],
    says: ['feature gate RemoteRequestHeaderUID does not exist at the emulation version 1.31: it was introduced in 1.32'],
    accepted: ['--feature-gates=RemoteRequestHeaderUID=true'],
  },
  {
    rule: 'authorization modes are known, not repeated, and have the files they need',
    refused: ['--authorization-mode=RBAC,Magic,ABAC,Webhook,RBAC', '--authorization-policy-file='],
    says: [
      'authorization-mode "Magic" is not a valid mode',
      "authorization-mode ABAC's authorization policy file not passed",
      "authorization-mode Webhook's authorization config file not passed",
      'authorization-mode ["RBAC" "Magic" "ABAC" "Webhook" "RBAC"] has mode specified more than once',
    ],
    accepted: ['--authorization-mode=Node,RBAC,ABAC,Webhook', '--authorization-policy-file=abac.jsonl', '--authorization-webhook-config-file=hook.yaml'],
  },
  {
    rule: 'policy and webhook files need their modes',
    refused: ['--authorization-policy-file=abac.jsonl', '--authorization-webhook-config-file=hook.yaml'],
    says: ['cannot specify --authorization-policy-file without mode ABAC', 'cannot specify --authorization-webhook-config-file without mode Webhook'],
    accepted: ['--authorization-mode=ABAC,Webhook', '--authorization-policy-file=abac.jsonl', '--authorization-webhook-config-file=hook.yaml'],
  },
  // Admission
  {
    rule: 'admission plugins are known and not both enabled and disabled',
    refused: ['--enable-admission-plugins=NodeRestriction,Nope,PodSecurity', '--disable-admission-plugins=PodSecurity,AlsoNope'],
    says: [
      'enable-admission-plugins plugin "Nope" is unknown',
      'disable-admission-plugins plugin "AlsoNope" is unknown',
      '[PodSecurity] in enable-admission-plugins and disable-admission-plugins overlapped',
    ],
    accepted: ['--enable-admission-plugins=NodeRestriction', '--disable-admission-plugins=PodSecurity'],
  },
  {
    rule: 'the deprecated --admission-control stands alone',
    refused: ['--admission-control=AlwaysAdmit,Nope', '--enable-admission-plugins=NodeRestriction'],
    says: ['admission-control and enable-admission-plugins/disable-admission-plugins flags are mutually exclusive', 'admission-control plugin "Nope" is unknown'],
    accepted: ['--admission-control=NamespaceLifecycle,ServiceAccount'],
  },
  // Versions
  {
    rule: 'the emulated version is at most three minor releases back, and not ahead',
    refused: ['--emulated-version=1.28', '--min-compatibility-version=1.29'],
    says: ['emulation version 1.28 is not between [1.29, 1.32]', 'minCompatibilityVersion version 1.29 is not between [1.28, 1.28]'],
    accepted: ['--emulated-version=kube=1.29', '--min-compatibility-version=1.28'],
  },
  {
    rule: 'the emulated version follows the version the server reports',
    refused: ['--version=v1.35.0', '--emulated-version=1.36'],
    says: ['emulation version 1.36 is not between [1.32, 1.35]'],
    accepted: ['--version=v1.35.0', '--emulated-version=1.32'],
  },
  {
    rule: 'forward compatibility only while emulating an older version',
    refused: ['--emulation-forward-compatible', '--runtime-config-emulation-forward-compatible'],
    says: [
      '--emulation-forward-compatible cannot be set to true if the emulation version is the same as the binary version',
      '--runtime-config-emulation-forward-compatible cannot be set to true if the emulation version is the same as the binary version',
    ],
    accepted: ['--emulation-forward-compatible', '--runtime-config-emulation-forward-compatible', '--emulated-version=1.31'],
  },
  {
    rule: '--runtime-config may not enable a group/version newer than the emulated version',
    refused: ['--emulated-version=1.30', '--runtime-config=resource.k8s.io/v1beta1=true,apps/v1=true'],
    says: [
      'cannot enable groupVersion resource.k8s.io/v1beta1 in runtime-config because it is introduced at 1.32 after the current version 1.30. Consider setting --runtime-config-emulation-forward-compatible=true',
    ],
    accepted: ['--emulated-version=1.30', '--runtime-config=resource.k8s.io/v1beta1=true', '--runtime-config-emulation-forward-compatible'],
  },
  {
    rule: '--runtime-config may not enable a resource newer than the emulated version',
    refused: ['--emulated-version=1.31', '--runtime-config=networking.k8s.io/v1/ipaddresses=true,networking.k8s.io/v1/ingresses=true'],
    says: [
      'cannot enable groupVersionResource networking.k8s.io/v1/ipaddresses in runtime-config because it is introduced at 1.33 after the current version 1.31. Consider setting --runtime-config-emulation-forward-compatible=true',
    ],
    accepted: ['--emulated-version=1.31', '--runtime-config=networking.k8s.io/v1/ipaddresses=true', '--runtime-config-emulation-forward-compatible'],
  },
  {
    rule: 'coordinated leader election needs LeaseCandidate served',
    refused: ['--feature-gates=CoordinatedLeaderElection=true'],
    says: ['CoordinatedLeaderElection feature requires coordination.k8s.io/v1alpha2 API to be enabled'],
    accepted: ['--feature-gates=CoordinatedLeaderElection=true', '--runtime-config=coordination.k8s.io/v1alpha2=true'],
  },
  {
    rule: '--runtime-config keys name API groups and take booleans',
    refused: ['--runtime-config=api/all=false,nope.io/v1=true,apps=true,batch/v1=maybe'],
    says: [
      'runtime-config invalid key apps',
      'invalid value of batch/v1: maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax',
      'unknown api groups nope.io',
    ],
    accepted: ['--runtime-config=api/all=false,v1=true,api/v1/pods,apps/v1=true,storage.k8s.io/v1/csidrivers=false,api/beta'],
  },
  {
    rule: '--runtime-config may not switch off every API and nothing else',
    refused: ['--runtime-config=api/all=false'],
    says: ['invalid key with only api/all=false'],
    accepted: ['--runtime-config=api/all=false,v1=true'],
  },
  {
    rule: '--show-hidden-metrics-for-version is the previous minor release',
    refused: ['--show-hidden-metrics-for-version=1.30'],
    says: ["--show-hidden-metrics-for-version must be omitted or have the value '1.31'. Only the previous minor version is allowed"],
    accepted: ['--show-hidden-metrics-for-version=1.31'],
  },
  {
    rule: 'feature gates do not mix the kube: prefix with none',
    refused: ['--feature-gates=APIServerIdentity=true', '--feature-gates=kube:KMSv1=false'],
    says: ['set kube feature gates with default empty prefix or kube: prefix consistently, do not mix use'],
    accepted: ['--feature-gates=kube:APIServerIdentity=true', '--feature-gates=kube:KMSv1=false'],
  },
  {
    rule: 'a gate the server does not know stops start-up',
    refused: ['--feature-gates=NoSuchGate=true'],
    says: ['unrecognized feature gate: NoSuchGate'],
    accepted: ['--feature-gates=AllAlpha=false,AllBeta=true,APIServerIdentity=true'],
  },
  {
    rule: 'an unknown gate is named alone, as upstream stops at the first one',
    refused: ['--feature-gates=kube:APIServerIdentity=true,kube:NoSuchGate=false,kube:StructuredAuthorizationConfiguration=false'],
    says: ['unrecognized feature gate: NoSuchGate'],
    accepted: ['--feature-gates=kube:StructuredAuthorizationConfiguration=true'],
  },
  {
    rule: 'gate names are case-sensitive',
    refused: ['--feature-gates=apiserveridentity=true'],
    says: ['unrecognized feature gate: apiserveridentity'],
    accepted: ['--feature-gates=APIServerIdentity=false'],
  },
  // Logs and metrics
  {
    rule: '--logging-format is text or json',
    refused: ['--logging-format=yaml'],
    says: ['--logging-format: Unsupported value: "yaml": supported values: "text", "json"'],
    accepted: ['--logging-format=text', '--logging-format=json'],
  },
  {
    rule: '--vmodule is for the text format only',
    refused: ['--logging-format=json', '--vmodule=httplog=3'],
    says: ['--vmodule: Forbidden: Only supported for text log format'],
    accepted: ['--logging-format=text', '--vmodule=httplog=3'],
  },
  {
    rule: 'split text streams need the LoggingAlphaOptions gate',
    refused: ['--log-text-split-stream', '--log-text-info-buffer-size=64Ki'],
    says: ['--log-text-split-stream: Forbidden: Feature LoggingAlphaOptions is disabled', '--log-text-info-buffer-size: Forbidden: Feature LoggingAlphaOptions is disabled'],
    accepted: ['--log-text-split-stream', '--log-text-info-buffer-size=64Ki', '--feature-gates=AllAlpha=true', '--runtime-config=api/alpha=true'],
  },
  {
    rule: '--disabled-metrics are metric names',
    refused: ['--disabled-metrics=apiserver_request_total,not-a-metric'],
    says: ['--disabled-metrics must be fully qualified metric names matching "^[a-zA-Z_:][a-zA-Z0-9_:]*$", got "not-a-metric"'],
    accepted: ['--disabled-metrics=apiserver_request_total'],
  },
  // Services and peers
  {
    rule: '--endpoint-reconciler-type is lease, none or master-count',
    refused: ['--endpoint-reconciler-type=static'],
    says: ['--endpoint-reconciler-type: Unsupported value: "static": supported values: "master-count", "lease", "none"'],
    accepted: ['--endpoint-reconciler-type=none'],
  },
  {
    rule: '--service-cluster-ip-range holds at most two ranges, of different families, not too large',
    refused: ['--service-cluster-ip-range=10.0.0.0/8,10.96.0.0/12,fd00::/108'],
    says: [
      '--service-cluster-ip-range must not contain more than two entries',
      '--service-cluster-ip-range[0] and --service-cluster-ip-range[1] must be of different IP family',
      'specified --service-cluster-ip-range is too large; for 32-bit addresses, the mask must be >= 12',
    ],
    accepted: ['--service-cluster-ip-range=10.96.0.0/12,fd00::/108'],
  },
  {
    rule: 'the primary service range has room for the cluster Service',
    refused: ['--service-cluster-ip-range=10.0.0.0/30'],
    says: ['the service cluster IP range must be at least 8 IP addresses'],
    accepted: ['--service-cluster-ip-range=10.0.0.0/29'],
  },
  {
    rule: 'the primary service range is of the advertised address family',
    refused: ['--service-cluster-ip-range=fd00::/108', '--advertise-address=10.0.0.1'],
    says: ['service IP family "fd00::/108" must match public address family "10.0.0.1"'],
    accepted: ['--service-cluster-ip-range=fd00::/108', '--advertise-address=fd00::1'],
  },
  {
    rule: 'the cluster Service node port lies in the node port range',
    refused: ['--kubernetes-service-node-port=8080'],
    says: ["platform service node port range 30000-32767 doesn't contain 8080"],
    accepted: ['--kubernetes-service-node-port=8080', '--service-node-port-range=8000-9000'],
  },
  {
    rule: 'the cluster Service node port is a port',
    refused: ['--platform-service-node-port=-1'],
    says: ['--platform-service-node-port -1 must be between 0 and 65535, inclusive. If 0, the cluster Service will be of type ClusterIP'],
    accepted: ['--platform-service-node-port=0'],
  },
  {
    rule: 'the peer flags need their gate and well-formed values',
    refused: ['--peer-advertise-ip=peer.local', '--peer-advertise-port=http'],
    says: [
      '--peer-advertise-ip: Invalid value: "peer.local": must be a valid IP address',
      '--peer-advertise-port: Invalid value: "http": must be a port number between 1 and 65535',
      '--peer-advertise-ip requires UnknownVersionInteroperabilityProxy feature to be turned on',
      '--peer-advertise-port requires UnknownVersionInteroperabilityProxy feature to be turned on',
    ],
    accepted: ['--peer-advertise-ip=10.0.0.2', '--peer-advertise-port=6443', '--peer-ca-file=ca.crt', '--feature-gates=UnknownVersionInteroperabilityProxy=true'],
  },
  // Leader election of the run-once controllers
  {
    rule: 'the lease outlasts the renew deadline',
    refused: ['--coordinated-leadership-lease-duration=10s', '--coordinated-leadership-renew-deadline=10s'],
    says: ['--coordinated-leadership-lease-duration must be greater than --coordinated-leadership-renew-deadline'],
    accepted: ['--coordinated-leadership-lease-duration=4s', '--coordinated-leadership-renew-deadline=3s', '--coordinated-leadership-retry-period=1s'],
  },
  {
    rule: 'the renew deadline leaves room for retries',
    refused: ['--coordinated-leadership-retry-period=9s'],
    says: ['--coordinated-leadership-renew-deadline must be greater than 1.2 times --coordinated-leadership-retry-period'],
    accepted: ['--coordinated-leadership-retry-period=8s'],
  },
  {
    rule: 'the timings are positive',
    refused: ['--coordinated-leadership-retry-period=0s'],
    says: ['--coordinated-leadership-retry-period must be greater than zero'],
    accepted: ['--coordinated-leadership-retry-period=1s'],
  },
]

describe('cross-flag rules', () => {
  it('find nothing wrong with the defaults', () => {
    assert.deepEqual(problems([]), [])
  })

  for (const c of CASES) {
    it(`${c.rule}: refuses ${c.refused.join(' ')}`, () => {
      assert.deepEqual(problems(c.refused), c.says)
    })
    it(`${c.rule}: accepts ${c.accepted.join(' ')}`, () => {
      assert.deepEqual(problems(c.accepted), [])
    })
  }

  it('report every problem of a command line at once', () => {
    assert.deepEqual(problems(['--goaway-chance=1', '--tls-min-version=old', '--storage-backend=etcd2']), [
      '--goaway-chance can not be less than 0 or greater than 0.02',
      '--tls-min-version: Unsupported value: "old": supported values: "VersionTLS10", "VersionTLS11", "VersionTLS12", "VersionTLS13"',
      "--storage-backend invalid, allowed values: kvstore3 (also spelled etcd3). If not specified, it will default to 'kvstore3'",
    ])
  })

  it('fall back to AlwaysAllow when no mode and no authorization file are given', () => {
    assert.deepEqual(authorizationModes({ 'authorization-mode': [], 'authorization-config': '' }), ['AlwaysAllow'])
    assert.deepEqual(authorizationModes({ 'authorization-mode': [], 'authorization-config': 'authz.yaml' }), [])
    assert.deepEqual(authorizationModes({ 'authorization-mode': ['Node', 'RBAC'], 'authorization-config': '' }), ['Node', 'RBAC'])
  })
})
