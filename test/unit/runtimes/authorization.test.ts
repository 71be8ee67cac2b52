import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { loadKubeconfigConnection } from '../../../core/config/kubeconfig.js'
import { readAuthorizationConfig, webhookConnection } from '../../../runtimes/node/daemon/authorization.js'

const dir = mkdtempSync(join(tmpdir(), 'authz-files-'))
after(() => rmSync(dir, { recursive: true, force: true }))

function kubeconfig(name: string, user: string): string {
  const path = join(dir, name)
  writeFileSync(
    path,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters: [{name: c, cluster: {server: "https://127.0.0.1:9443/authorize", certificate-authority: ca.pem}}]',
      `users: [{name: u, user: ${user}}]`,
      'contexts: [{name: x, context: {cluster: c, user: u}}]',
      'current-context: x',
    ].join('\n'),
  )
  return path
}

const config = (kubeConfigFile: string) =>
  [
    'apiVersion: apiserver.config.k8s.io/v1',
    'kind: AuthorizationConfiguration',
    'authorizers:',
    '- type: Webhook',
    '  name: engine',
    '  webhook:',
    '    timeout: 3s',
    '    subjectAccessReviewVersion: v1',
    '    failurePolicy: Deny',
    '    cacheUnauthorizedRequests: false',
    `    connectionInfo: {type: KubeConfigFile, kubeConfigFile: ${kubeConfigFile}}`,
    '- type: Node',
    '  name: node',
  ].join('\n')

describe('authorization files of the daemon', () => {
  writeFileSync(join(dir, 'ca.pem'), 'CA PEM')
  writeFileSync(join(dir, 'client.pem'), 'CERT PEM')
  writeFileSync(join(dir, 'client-key.pem'), 'KEY PEM')
  writeFileSync(join(dir, 'token'), 'secret-token\n')

  it('reads the CA, client certificate and key a webhook kubeconfig names, relative to it', () => {
    const path = kubeconfig('cert.kubeconfig', '{client-certificate: client.pem, client-key: client-key.pem}')
    assert.deepEqual(webhookConnection(loadKubeconfigConnection(readFileSync(path, 'utf8'), path)), {
      url: 'https://127.0.0.1:9443/authorize',
      certificateAuthority: 'CA PEM',
      clientCertificate: 'CERT PEM',
      clientKey: 'KEY PEM',
    })
  })

  it('reads a token file', () => {
    const path = kubeconfig('token.kubeconfig', '{tokenFile: token}')
    assert.equal(webhookConnection(loadKubeconfigConnection(readFileSync(path, 'utf8'), path)).bearerToken, 'secret-token')
  })

  it('builds the chain of an AuthorizationConfiguration with each webhook\'s settings', () => {
    const path = join(dir, 'authz.yaml')
    writeFileSync(path, config(kubeconfig('engine.kubeconfig', '{client-certificate: client.pem, client-key: client-key.pem}')))
    const [webhook, node] = readAuthorizationConfig(path)
    assert.deepEqual({ ...webhook!.webhook, matchConditions: undefined, connection: undefined }, {
      name: 'engine',
      connection: undefined,
      subjectAccessReviewVersion: 'v1',
      timeoutMs: 3000,
      authorizedTTLMs: 300_000,
      unauthorizedTTLMs: 0,
      failurePolicy: 'Deny',
      matchConditions: undefined,
    })
    assert.equal(webhook!.webhook!.connection.clientKey, 'KEY PEM')
    assert.deepEqual(node, { type: 'Node', name: 'node' })
  })

  it('refuses a configuration whose webhook kubeconfig names a file that is missing', () => {
    const path = join(dir, 'broken.yaml')
    writeFileSync(path, config(kubeconfig('missing.kubeconfig', '{client-certificate: nowhere.pem, client-key: client-key.pem}')))
    assert.throws(() => readAuthorizationConfig(path), /ENOENT.*nowhere\.pem/)
  })
})
