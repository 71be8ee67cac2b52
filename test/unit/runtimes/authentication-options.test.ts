import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { readCommandLine } from '../../../core/options/flags/index.js'
import { createCertificateAuthority } from '../../../core/pki/certificates.js'
import type { Logger } from '../../../core/logging/logger.js'
import { AuthenticationSetupError, jwtAndWebhookOptions } from '../../../runtimes/node/daemon/authentication-options.js'
import { loadConfigFiles } from '../../../runtimes/node/daemon/config-files.js'

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} }
let CA = ''

let dir = ''
const file = (name: string) => join(dir, name)

function optionsFor(argv: string[]) {
  const command = readCommandLine(argv)
  if (command.action !== 'run') return assert.fail()
  return jwtAndWebhookOptions(command.flags, loadConfigFiles(command.flags, quiet))
}

describe("the daemon's authentication options", () => {
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'authn-options-'))
    CA = (await createCertificateAuthority({ commonName: 'issuer-ca' })).certificate
    await writeFile(file('ca.crt'), CA)
    await writeFile(file('anonymous.yaml'), 'apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous: {enabled: false}\n')
    await writeFile(
      file('conditions.yaml'),
      'apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous: {enabled: true, conditions: [{path: /healthz}]}\n',
    )
    await writeFile(
      file('webhook.kubeconfig'),
      `apiVersion: v1
kind: Config
clusters: [{name: hook, cluster: {server: "https://127.0.0.1:8443/authenticate", certificate-authority: ca.crt}}]
users: [{name: api, user: {client-certificate-data: ${btoa('CERT')}, client-key-data: ${btoa('KEY')}}}]
contexts: [{name: hook, context: {cluster: hook, user: api}}]
current-context: hook
`,
    )
    await writeFile(
      file('token.kubeconfig'),
      `apiVersion: v1
kind: Config
clusters: [{name: hook, cluster: {server: "https://127.0.0.1:8443/authenticate"}}]
users: [{name: api, user: {token: secret}}]
contexts: [{name: hook, context: {cluster: hook, user: api}}]
current-context: hook
`,
    )
  })
  after(() => rm(dir, { recursive: true, force: true }))

  it('turns the --oidc-* flags into one JWT authenticator with the legacy prefix of the issuer for claims other than email', () => {
    const issuer = '--oidc-issuer-url=https://issuer.example.com'
    const bySub = optionsFor([issuer, '--oidc-client-id=kubernetes', `--oidc-ca-file=${file('ca.crt')}`, '--oidc-required-claim=hd=example.com'])
    const jwt = bySub.jwt?.[0]
    assert.equal(jwt?.issuer.url, 'https://issuer.example.com')
    assert.deepEqual(jwt?.issuer.audiences, ['kubernetes'])
    assert.equal(jwt?.issuer.certificateAuthority, CA)
    assert.deepEqual(jwt?.claimMappings.username, { claim: 'sub', prefix: 'https://issuer.example.com#', expression: '' })
    assert.deepEqual(
      jwt?.claimValidationRules.map((r) => [r.claim, r.requiredValue]),
      [['hd', 'example.com']],
    )
    assert.deepEqual(bySub.jwtSigningAlgorithms, ['RS256'])

    const byEmail = optionsFor([issuer, '--oidc-client-id=k', '--oidc-username-claim=email', '--oidc-groups-claim=groups', '--oidc-signing-algs=ES256'])
    assert.equal(byEmail.jwt?.[0]?.claimMappings.username.prefix, '')
    assert.deepEqual(byEmail.jwt?.[0]?.claimMappings.groups, { claim: 'groups', prefix: '', expression: '' })
    assert.deepEqual(byEmail.jwtSigningAlgorithms, ['ES256'])
    const noPrefix = optionsFor([issuer, '--oidc-client-id=k', '--oidc-username-prefix=-'])
    assert.equal(noPrefix.jwt?.[0]?.claimMappings.username.prefix, '')
    const ownPrefix = optionsFor([issuer, '--oidc-client-id=k', '--oidc-username-prefix=corp:'])
    assert.equal(ownPrefix.jwt?.[0]?.claimMappings.username.prefix, 'corp:')
  })

  it('refuses an unreadable or malformed --oidc-ca-file as a start-up problem naming the flag', async () => {
    await writeFile(file('bad.crt'), '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n')
    assert.throws(
      () => optionsFor(['--oidc-issuer-url=https://issuer.example.com', '--oidc-client-id=k', `--oidc-ca-file=${file('bad.crt')}`]),
      /^Error: --oidc-\*: .*certificateAuthority: Invalid value: "<omitted>": x509: malformed certificate/,
    )
    assert.throws(
      () => optionsFor(['--oidc-issuer-url=https://issuer.example.com', '--oidc-client-id=k', `--oidc-ca-file=${file('missing.crt')}`]),
      (err: Error) => err instanceof AuthenticationSetupError && /^--oidc-ca-file: cannot read .*missing\.crt/.test(err.message),
    )
  })

  it('gives a file without JWT authenticators an empty list, which a reload can fill', () => {
    assert.deepEqual(optionsFor([`--authentication-config=${file('anonymous.yaml')}`]).jwt, [])
    assert.deepEqual(optionsFor([`--authentication-config=${file('conditions.yaml')}`]).jwt, [])
  })

  it("reads the token webhook's kubeconfig into PEM text, its version and cache TTL", () => {
    const o = optionsFor([
      `--authentication-token-webhook-config-file=${file('webhook.kubeconfig')}`,
      '--authentication-token-webhook-version=v1',
      '--authentication-token-webhook-cache-ttl=30s',
    ])
    assert.deepEqual(o.tokenWebhook, {
      url: 'https://127.0.0.1:8443/authenticate',
      certificateAuthority: CA,
      clientCertificate: { certificate: 'CERT', key: 'KEY' },
      version: 'v1',
      cacheTtlMs: 30_000,
    })
    assert.equal(optionsFor([`--authentication-token-webhook-config-file=${file('webhook.kubeconfig')}`]).tokenWebhook?.version, 'v1beta1')
  })

  it('refuses a webhook kubeconfig whose credential is a token, which the server would not present', () => {
    assert.throws(() => optionsFor([`--authentication-token-webhook-config-file=${file('token.kubeconfig')}`]), /only client certificates are supported/)
  })

  it('refuses a webhook kubeconfig that asks for impersonation or a proxy, as the other webhook flags do, rather than calling the webhook directly', async () => {
    const kubeconfig = (cluster: string, user: string) => `apiVersion: v1
kind: Config
clusters: [{name: hook, cluster: {server: "https://127.0.0.1:8443/authenticate", ${cluster}}}]
users: [{name: api, user: {client-certificate-data: ${btoa('CERT')}, client-key-data: ${btoa('KEY')}${user}}}]
contexts: [{name: hook, context: {cluster: hook, user: api}}]
current-context: hook
`
    await writeFile(file('impersonating.kubeconfig'), kubeconfig('certificate-authority: ca.crt', ', as: system:admin, as-groups: [system:masters]'))
    await writeFile(file('proxied.kubeconfig'), kubeconfig('proxy-url: "http://127.0.0.1:3128"', ''))
    for (const name of ['impersonating.kubeconfig', 'proxied.kubeconfig']) {
      assert.throws(
        () => optionsFor([`--authentication-token-webhook-config-file=${file(name)}`]),
        (err: Error) =>
          err instanceof AuthenticationSetupError &&
          err.message === '--authentication-token-webhook-config-file: basic auth, impersonation and proxies are not supported; use a client certificate',
        name,
      )
    }
  })
})
