/**
 * The daemon under `--authorization-mode=RBAC` with users from
 * `--token-auth-file`, driven by kubectl as each user: namespace-scoped
 * grants, resourceNames, group bindings, `kubectl auth can-i` (with `-n`
 * and `--list`), and escalation refused then allowed with escalate and bind.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { Daemon, eventually, type KubectlResult } from './daemon.js'

const TOKENS = ['alice-token,alice,1001,"dev"', 'bob-token,bob,1002,"ops"', 'carol-token,carol,1003,"ops,leads"'].join('\n')

type User = 'alice' | 'bob' | 'carol'

describe('RBAC with kubectl as several users', () => {
  let daemon: Daemon
  const kubeconfigs = new Map<User, string>()

  /** kubectl as `user`: a kubeconfig with only the user's token (a client certificate would authenticate first). */
  const as = (user: User, ...args: string[]): Promise<KubectlResult> => daemon.kubectl('--kubeconfig', kubeconfigs.get(user)!, ...args)
  const okAs = async (user: User, ...args: string[]): Promise<string> => {
    const r = await as(user, ...args)
    assert.equal(r.code, 0, `kubectl ${args.join(' ')} as ${user} failed:\n${r.stderr}`)
    return r.stdout
  }
  /** Waits until `user` may do what `can-i` asks: bindings reach the authorizer through a watch. */
  const untilCan = (user: User, ...args: string[]) =>
    eventually(async () => assert.equal((await as(user, 'auth', 'can-i', ...args)).stdout.trim(), 'yes'))

  const tokenDir = mkdtempSync(join(tmpdir(), 'apiserver-e2e-tokens-'))

  before(async () => {
    const tokenFile = join(tokenDir, 'tokens.csv')
    writeFileSync(tokenFile, `${TOKENS}\n`)
    daemon = await Daemon.start(['--authorization-mode=RBAC', `--token-auth-file=${tokenFile}`])
    const server = (await daemon.ok('config', 'view', '--raw', '--minify', '-o', 'jsonpath={.clusters[0].cluster.server}')).trim()
    const ca = (await daemon.ok('config', 'view', '--raw', '--minify', '-o', 'jsonpath={.clusters[0].cluster.certificate-authority-data}')).trim()
    for (const user of ['alice', 'bob', 'carol'] as const) {
      kubeconfigs.set(
        user,
        daemon.manifest(
          `${user}.kubeconfig`,
          [
            'apiVersion: v1',
            'kind: Config',
            `clusters: [{name: e2e, cluster: {server: "${server}", certificate-authority-data: "${ca}"}}]`,
            `users: [{name: ${user}, user: {token: ${user}-token}}]`,
            `contexts: [{name: ${user}, context: {cluster: e2e, user: ${user}}}]`,
            `current-context: ${user}`,
          ].join('\n'),
        ),
      )
    }
    // What kubectl needs to find its way (discovery) and to ask can-i, granted to every authenticated user
    // under names of this test's own, so that it holds whether or not the server ships a default policy.
    await daemon.ok('create', 'clusterrole', 'e2e-discovery', '--verb=get', '--non-resource-url=/api', '--non-resource-url=/api/*', '--non-resource-url=/apis', '--non-resource-url=/apis/*', '--non-resource-url=/version', '--non-resource-url=/openapi/*')
    await daemon.ok('create', 'clusterrole', 'e2e-self-review', '--verb=create', '--resource=selfsubjectaccessreviews.authorization.k8s.io,selfsubjectrulesreviews.authorization.k8s.io')
    for (const role of ['e2e-discovery', 'e2e-self-review']) await daemon.ok('create', 'clusterrolebinding', role, `--clusterrole=${role}`, '--group=system:authenticated')
    for (const ns of ['team-a', 'team-b']) await daemon.ok('create', 'namespace', ns)
    await untilCan('alice', 'create', 'selfsubjectrulesreviews.authorization.k8s.io')
  })

  after(async () => {
    await daemon?.stop()
    rmSync(tokenDir, { recursive: true, force: true })
  })

  it('refuses a user with no binding in upstream\'s words', async () => {
    const r = await as('alice', 'get', 'pods', '-n', 'team-a')
    assert.notEqual(r.code, 0)
    assert.match(r.stderr, /Error from server \(Forbidden\): pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "team-a"/)
    const can = await as('alice', 'auth', 'can-i', 'list', 'pods', '-n', 'team-a')
    assert.equal(can.stdout.trim(), 'no')
    assert.equal(can.code, 1)
  })

  it('grants a Role in one namespace through a RoleBinding, and nowhere else', async () => {
    await daemon.ok('create', 'role', 'pod-reader', '--verb=get,list,watch', '--resource=pods', '-n', 'team-a')
    await daemon.ok('create', 'rolebinding', 'alice-pods', '--role=pod-reader', '--user=alice', '-n', 'team-a')
    await untilCan('alice', 'list', 'pods', '-n', 'team-a')
    assert.match(await okAs('alice', 'get', 'pods', '-n', 'team-a'), /^$/)
    const elsewhere = await as('alice', 'get', 'pods', '-n', 'team-b')
    assert.match(elsewhere.stderr, /pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "team-b"/)
    assert.equal((await as('alice', 'auth', 'can-i', 'list', 'pods', '-n', 'team-b')).stdout.trim(), 'no')
    assert.equal((await as('alice', 'auth', 'can-i', 'delete', 'pods', '-n', 'team-a')).stdout.trim(), 'no')
    // The administrator asks on alice's behalf (--as impersonates her): the same answers.
    assert.equal((await daemon.kubectl('auth', 'can-i', 'list', 'pods', '-n', 'team-a', '--as=alice')).stdout.trim(), 'yes')
    assert.equal((await daemon.kubectl('auth', 'can-i', 'list', 'pods', '-n', 'team-b', '--as=alice')).stdout.trim(), 'no')
  })

  it('limits a grant to the objects it names, for every member of a bound group', async () => {
    await daemon.ok('create', 'configmap', 'one', '--from-literal=a=1', '-n', 'team-a')
    await daemon.ok('create', 'configmap', 'two', '--from-literal=a=2', '-n', 'team-a')
    await daemon.ok('create', 'role', 'cm-one', '--verb=get', '--resource=configmaps', '--resource-name=one', '-n', 'team-a')
    await daemon.ok('create', 'rolebinding', 'ops-cm-one', '--role=cm-one', '--group=ops', '-n', 'team-a')
    await untilCan('bob', 'get', 'configmap/one', '-n', 'team-a')
    for (const user of ['bob', 'carol'] as const) {
      assert.match(await okAs(user, 'get', 'configmap', 'one', '-n', 'team-a', '-o', 'jsonpath={.data.a}'), /^1$/)
      const two = await as(user, 'get', 'configmap', 'two', '-n', 'team-a')
      assert.match(two.stderr, new RegExp(`configmaps "two" is forbidden: User "${user}" cannot get resource "configmaps" in API group "" in the namespace "team-a"`))
      assert.equal((await as(user, 'auth', 'can-i', 'list', 'configmaps', '-n', 'team-a')).stdout.trim(), 'no')
    }
    assert.equal((await as('alice', 'auth', 'can-i', 'get', 'configmap/one', '-n', 'team-a')).stdout.trim(), 'no')
  })

  it('lists what the caller may do with auth can-i --list', async () => {
    const list = await okAs('alice', 'auth', 'can-i', '--list', '-n', 'team-a')
    assert.match(list, /^Resources\s+Non-Resource URLs\s+Resource Names\s+Verbs$/m)
    assert.match(list, /^pods\s+\[\]\s+\[\]\s+\[get list watch\]$/m)
    assert.match(list, /^\s+\[\/apis\/\*\]\s+\[\]\s+\[get\]$/m)
    const elsewhere = await okAs('alice', 'auth', 'can-i', '--list', '-n', 'team-b')
    assert.doesNotMatch(elsewhere, /^pods\s/m)
  })

  it('refuses a role granting more than the writer holds, then allows it with escalate', async () => {
    await daemon.ok('create', 'role', 'role-writer', '--verb=create,get', '--resource=roles.rbac.authorization.k8s.io', '-n', 'team-a')
    await daemon.ok('create', 'rolebinding', 'alice-role-writer', '--role=role-writer', '--user=alice', '-n', 'team-a')
    await untilCan('alice', 'create', 'roles.rbac.authorization.k8s.io', '-n', 'team-a')
    const refused = await as('alice', 'create', 'role', 'secret-reader', '--verb=get', '--resource=secrets', '-n', 'team-a')
    assert.notEqual(refused.code, 0)
    assert.match(
      refused.stderr,
      /roles\.rbac\.authorization\.k8s\.io "secret-reader" is forbidden: user "alice" \(groups=\["dev" "system:authenticated"\]\) is attempting to grant RBAC permissions not currently held:\n\{APIGroups:\[""\], Resources:\["secrets"\], Verbs:\["get"\]\}/,
    )
    assert.match((await daemon.kubectl('get', 'role', 'secret-reader', '-n', 'team-a')).stderr, /NotFound/)
    // A role within what alice holds is fine.
    await okAs('alice', 'create', 'role', 'pod-getter', '--verb=get', '--resource=pods', '-n', 'team-a')
    await daemon.ok('create', 'role', 'role-escalator', '--verb=escalate', '--resource=roles.rbac.authorization.k8s.io', '-n', 'team-a')
    await daemon.ok('create', 'rolebinding', 'alice-role-escalator', '--role=role-escalator', '--user=alice', '-n', 'team-a')
    await untilCan('alice', 'escalate', 'roles.rbac.authorization.k8s.io', '-n', 'team-a')
    await okAs('alice', 'create', 'role', 'secret-reader', '--verb=get', '--resource=secrets', '-n', 'team-a')
  })

  it('refuses a binding to a role the writer does not hold, then allows it with bind', async () => {
    await daemon.ok('create', 'role', 'binding-writer', '--verb=create,get', '--resource=rolebindings.rbac.authorization.k8s.io', '-n', 'team-b')
    await daemon.ok('create', 'rolebinding', 'carol-binding-writer', '--role=binding-writer', '--user=carol', '-n', 'team-b')
    await daemon.ok('create', 'clusterrole', 'node-viewer', '--verb=get,list', '--resource=nodes')
    await untilCan('carol', 'create', 'rolebindings.rbac.authorization.k8s.io', '-n', 'team-b')
    const refused = await as('carol', 'create', 'rolebinding', 'bob-nodes', '--clusterrole=node-viewer', '--user=bob', '-n', 'team-b')
    assert.match(
      refused.stderr,
      /rolebindings\.rbac\.authorization\.k8s\.io "bob-nodes" is forbidden: user "carol" \(groups=\["ops" "leads" "system:authenticated"\]\) is attempting to grant RBAC permissions not currently held:\n\{APIGroups:\[""\], Resources:\["nodes"\], Verbs:\["get" "list"\]\}/,
    )
    assert.match((await daemon.kubectl('get', 'rolebinding', 'bob-nodes', '-n', 'team-b')).stderr, /NotFound/)
    await daemon.ok('create', 'clusterrole', 'bind-node-viewer', '--verb=bind', '--resource=clusterroles.rbac.authorization.k8s.io', '--resource-name=node-viewer')
    await daemon.ok('create', 'rolebinding', 'carol-bind-node-viewer', '--clusterrole=bind-node-viewer', '--user=carol', '-n', 'team-b')
    await untilCan('carol', 'bind', 'clusterroles.rbac.authorization.k8s.io/node-viewer', '-n', 'team-b')
    await okAs('carol', 'create', 'rolebinding', 'bob-nodes', '--clusterrole=node-viewer', '--user=bob', '-n', 'team-b')
  })
})

