/**
 * Authorization modes through the daemon, with kubectl as users of a token
 * file: an --authorization-config chain whose Webhook is an HTTPS server
 * this test runs on loopback (reached through a kubeconfig with a CA and a
 * client certificate), its reload when the file changes, and Node plus ABAC
 * from the legacy flags.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { type SarWebhook, startSarWebhook } from '../integration/sar-webhook.js'
import { BIN, Daemon, eventually } from './daemon.js'

const TOKENS = [
  'alice-token,alice,1,"staff"',
  'bob-token,bob,2,"staff"',
  'carol-token,carol,3,"staff"',
  'node-a-token,system:node:node-a,4,"system:nodes"',
  'forger-token,system:node:node-a,5,"staff"',
].join('\n')

/** kubectl as a token user: no client certificate, only the cluster's CA and the token. */
async function kubectlAs(daemon: Daemon, user: string, ...args: string[]) {
  return daemon.kubectl(
    '--kubeconfig=/dev/null',
    `--server=https://127.0.0.1:${daemon.port}`,
    `--certificate-authority=${join(daemon.certDir, 'ca.crt')}`,
    `--token=${user}-token`,
    ...args,
  )
}

function authorizationConfig(authorizers: string): string {
  return ['apiVersion: apiserver.config.k8s.io/v1', 'kind: AuthorizationConfiguration', 'authorizers:', authorizers].join('\n')
}

const WEBHOOK_THEN_DENY = authorizationConfig(
  [
    '- type: Webhook',
    '  name: policy-engine',
    '  webhook:',
    '    timeout: 5s',
    '    subjectAccessReviewVersion: v1',
    '    matchConditionSubjectAccessReviewVersion: v1',
    '    failurePolicy: NoOpinion',
    '    connectionInfo: {type: KubeConfigFile, kubeConfigFile: WEBHOOK_KUBECONFIG}',
    '    matchConditions:',
    "    - expression: \"request.user != 'carol'\"",
    '- type: AlwaysDeny',
    '  name: alwaysdeny',
  ].join('\n'),
)

describe('authorization through the daemon', () => {
  let hook: SarWebhook
  let daemon: Daemon
  let dir: string

  before(async () => {
    hook = await startSarWebhook((review) => {
      const user = review.body.spec['user']
      if (user === 'bob') return { denied: true, reason: 'bob is on leave' }
      return user === 'alice' ? { allowed: true } : {}
    })
  })
  after(async () => {
    await daemon?.stop()
    await hook.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('asks the configured webhook, skips it when a match condition is false, and the next authorizer decides', async () => {
    dir = mkdtempSync(join(tmpdir(), 'apiserver-authz-'))
    writeFileSync(join(dir, 'tokens.csv'), TOKENS)
    writeFileSync(join(dir, 'webhook-ca.pem'), hook.ca.certificate)
    writeFileSync(join(dir, 'client.pem'), hook.client.certificate)
    writeFileSync(join(dir, 'client-key.pem'), hook.client.privateKey)
    const kubeconfig = join(dir, 'webhook.kubeconfig')
    writeFileSync(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        `clusters: [{name: hook, cluster: {server: "${hook.url}", certificate-authority: webhook-ca.pem}}]`,
        'users: [{name: apiserver, user: {client-certificate: client.pem, client-key: client-key.pem}}]',
        'contexts: [{name: hook, context: {cluster: hook, user: apiserver}}]',
        'current-context: hook',
      ].join('\n'),
    )
    writeFileSync(join(dir, 'authz.yaml'), WEBHOOK_THEN_DENY.replace('WEBHOOK_KUBECONFIG', kubeconfig))
    daemon = await Daemon.start([`--token-auth-file=${join(dir, 'tokens.csv')}`, `--authorization-config=${join(dir, 'authz.yaml')}`])

    const alice = await kubectlAs(daemon, 'alice', 'get', 'configmaps', '-n', 'default')
    assert.equal(alice.code, 0, alice.stderr)
    assert.equal(hook.received.at(-1)?.clientCommonName, 'kube-apiserver')
    assert.equal((await kubectlAs(daemon, 'alice', 'auth', 'can-i', 'delete', 'secrets', '-n', 'kube-system')).stdout.trim(), 'yes')

    const bob = await kubectlAs(daemon, 'bob', 'get', 'configmaps', '-n', 'default')
    assert.notEqual(bob.code, 0)
    assert.match(
      bob.stderr,
      /Error from server \(Forbidden\): configmaps is forbidden: User "bob" cannot list resource "configmaps" in API group "" in the namespace "default": bob is on leave/,
    )

    const asked = hook.received.length
    const carol = await kubectlAs(daemon, 'carol', 'get', 'configmaps', '-n', 'default')
    assert.notEqual(carol.code, 0)
    assert.match(carol.stderr, /User "carol" cannot list resource "configmaps"/)
    assert.equal(hook.received.length, asked, 'the match condition kept carol from the webhook')
  })

  it('replaces the chain when the file changes, and keeps it when the new file is invalid', async () => {
    writeFileSync(join(dir, 'authz.yaml'), authorizationConfig('- type: AlwaysAllow\n  name: alwaysallow'))
    await eventually(async () => {
      const carol = await kubectlAs(daemon, 'carol', 'get', 'configmaps', '-n', 'default')
      assert.equal(carol.code, 0, carol.stderr)
    }, 20_000)
    assert.equal((await kubectlAs(daemon, 'bob', 'get', 'configmaps', '-n', 'default')).code, 0)

    writeFileSync(join(dir, 'authz.yaml'), authorizationConfig('- type: Magic\n  name: magic'))
    await eventually(() => assert.match(daemon.logs.join(''), /reloading the authorization configuration failed/), 20_000)
    assert.match(daemon.logs.join(''), /authorizers\[0\]\.type: Unsupported value: \\"Magic\\"/)
    const carol = await kubectlAs(daemon, 'carol', 'get', 'configmaps', '-n', 'default')
    assert.equal(carol.code, 0, carol.stderr)
  })
})

describe('Node and ABAC from the legacy flags', () => {
  let daemon: Daemon
  let dir: string
  after(async () => {
    await daemon?.stop()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('refuses to start with an ABAC authorizer in --authorization-config but no --authorization-policy-file, naming the field', () => {
    const local = mkdtempSync(join(tmpdir(), 'authz-abac-'))
    try {
      writeFileSync(join(local, 'authz.yaml'), authorizationConfig('- type: RBAC\n  name: rbac\n- type: ABAC\n  name: abac'))
      const r = spawnSync(
        process.execPath,
        [BIN, '--secure-port=0', '--bind-address=127.0.0.1', `--cert-dir=${join(local, 'pki')}`, `--data-dir=${join(local, 'data')}`, `--authorization-config=${join(local, 'authz.yaml')}`],
        { encoding: 'utf8', timeout: 30_000 },
      )
      assert.equal(r.status, 1, r.stderr)
      assert.match(r.stderr, /^Error: --authorization-config: authorizers\[1\]\.type: ABAC's authorization policy file not passed \(--authorization-policy-file\)$/m)
      assert.doesNotMatch(r.stderr, /^\s+at /m, 'no stack trace')
    } finally {
      rmSync(local, { recursive: true, force: true })
    }
  })

  it('lets a kubelet read its pod and not another node\'s, and ABAC allow per rule', async () => {
    dir = mkdtempSync(join(tmpdir(), 'apiserver-authz-'))
    writeFileSync(join(dir, 'tokens.csv'), TOKENS)
    const rule = (spec: object) => JSON.stringify({ apiVersion: 'abac.authorization.kubernetes.io/v1beta1', kind: 'Policy', spec })
    writeFileSync(join(dir, 'policy.jsonl'), [rule({ user: 'alice', namespace: 'default', resource: '*', apiGroup: '*' }), rule({ user: 'alice', nonResourcePath: '*' })].join('\n'))
    daemon = await Daemon.start([
      `--token-auth-file=${join(dir, 'tokens.csv')}`,
      '--authorization-mode=Node,ABAC',
      `--authorization-policy-file=${join(dir, 'policy.jsonl')}`,
    ])
    const pod = (name: string, node: string) =>
      daemon.manifest(`${name}.yaml`, `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}, namespace: default}\nspec: {nodeName: ${node}, containers: [{name: c, image: nginx}]}\n`)
    await daemon.ok('apply', '-f', pod('on-a', 'node-a'))
    await daemon.ok('apply', '-f', pod('on-b', 'node-b'))

    await eventually(async () => {
      const own = await kubectlAs(daemon, 'node-a', 'get', 'pod', 'on-a', '-n', 'default', '-o', 'name')
      assert.equal(own.stdout.trim(), 'pod/on-a', own.stderr)
    })
    const other = await kubectlAs(daemon, 'node-a', 'get', 'pod', 'on-b', '-n', 'default')
    assert.match(other.stderr, /pods "on-b" is forbidden: User "system:node:node-a" cannot get resource "pods" in API group "" in the namespace "default"/)
    const forged = await kubectlAs(daemon, 'forger', 'get', 'pod', 'on-a', '-n', 'default')
    assert.match(forged.stderr, /Forbidden/)

    assert.equal((await kubectlAs(daemon, 'alice', 'get', 'pods', '-n', 'default')).code, 0)
    const elsewhere = await kubectlAs(daemon, 'alice', 'get', 'pods', '-n', 'kube-system')
    assert.match(elsewhere.stderr, /cannot list resource "pods" in API group "" in the namespace "kube-system"/)
  })
})
