/**
 * kubectl against the daemon with a real node agent on loopback over HTTPS:
 * the agent checks the server's `--nodeagent-client-*` certificate, the
 * server checks the agent's against `--nodeagent-certificate-authority`, the
 * node's address comes from `--kubelet-preferred-address-types` and its port
 * from `status.daemonEndpoints`. `kubectl logs` (and `-f`), `kubectl exec -i`
 * with stdin and an exit code (WebSocket `v5.channel.k8s.io`, passed through
 * to the agent), `kubectl port-forward` moving 256 KiB both ways (SPDY/3.1,
 * after the agent refused kubectl's WebSocket attempt), upstream's refusals (a container to choose, a negative
 * tailLines, a loopback node behind nodes/proxy at any port), and the attacks: an agent
 * with a certificate from another CA is refused, a user without pods/exec
 * gets 403 and the agent sees nothing, and neither does it when a
 * ValidatingAdmissionPolicy on CONNECT refuses the exec.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { createCertificateAuthority, issueClientCertificate } from '../../core/pki/certificates.js'
import { createServer, connect, type Server } from 'node:net'
import { type NodeAgent, startNodeAgent } from '../integration/node-agent-server.js'
import { podPorts } from '../integration/spdy-agent.js'
import { Daemon, eventually, freePort } from './daemon.js'

function node(name: string, port: number): string {
  return `apiVersion: v1
kind: Node
metadata: {name: ${name}}
status:
  addresses: [{type: Hostname, address: ${name}.invalid}, {type: InternalIP, address: 127.0.0.1}]
  daemonEndpoints: {kubeletEndpoint: {Port: ${port}}}
`
}

function pod(name: string, nodeName: string, containers: string[]): string {
  return `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: default}
spec:
  nodeName: ${nodeName}
  containers: [${containers.map((c) => `{name: ${c}, image: busybox, stdin: true}`).join(', ')}]
`
}

/** The viewer may find its way (discovery) and read pods and their logs, nothing more. */
const VIEWER_RBAC = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: e2e-discovery}
rules: [{verbs: [get], nonResourceURLs: [/api, /api/*, /apis, /apis/*, /version, /openapi/*]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: e2e-discovery}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: e2e-discovery}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: 'system:authenticated'}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: log-reader, namespace: default}
rules: [{apiGroups: [''], verbs: [get, list], resources: [pods, pods/log]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: log-reader, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: log-reader}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: viewer}]
`

describe('kubectl and a node agent', () => {
  let daemon: Daemon
  let agent: NodeAgent
  let impostor: NodeAgent
  const dir = mkdtempSync(join(tmpdir(), 'node-agent-e2e-'))
  let viewerConfig = ''
  // The pod's port 80, really a loopback echo server the agent forwards to.
  let echo: Server


  before(async () => {
    const clientCA = await createCertificateAuthority({ commonName: 'node-agent-client-ca' })
    const client = await issueClientCertificate(clientCA, { commonName: 'kube-apiserver-kubelet-client', organizations: ['system:masters'] })
    agent = await startNodeAgent(clientCA.certificate)
    // Same client CA, but serving with a certificate from a CA the server does not trust.
    impostor = await startNodeAgent(clientCA.certificate)
    const file = (name: string, text: string) => {
      writeFileSync(join(dir, name), text)
      return join(dir, name)
    }
    daemon = await Daemon.start([
      '--authorization-mode=RBAC',
      `--token-auth-file=${file('tokens.csv', 'viewer-token,viewer,2001,"viewers"\n')}`,
      `--nodeagent-certificate-authority=${file('agent-ca.crt', agent.servingCA)}`,
      `--nodeagent-client-certificate=${file('client.crt', client.certificate)}`,
      `--nodeagent-client-key=${file('client.key', client.privateKey)}`,
      '--kubelet-preferred-address-types=InternalIP,Hostname',
      '--nodeagent-timeout=3s',
    ])
    echo = createServer((socket) => socket.pipe(socket))
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve))
    podPorts.set(80, (echo.address() as { port: number }).port)
    const closed = await freePort()
    agent.logs.set('default/web/app', ['first line', 'second line', 'third line'])
    impostor.logs.set('default/stray/app', ['never read'])
    await daemon.ok(
      'apply',
      '-f',
      daemon.manifest(
        'cluster.yaml',
        [node('node-1', agent.port), node('node-2', impostor.port), node('node-3', closed), pod('web', 'node-1', ['app']), pod('pair', 'node-1', ['a', 'b']), pod('stray', 'node-2', ['app']), pod('lost', 'node-3', ['app']), VIEWER_RBAC].join('---\n'),
      ),
    )
    // kubectl forwards ports only to a running pod.
    await daemon.ok('patch', 'pod', 'web', '--subresource=status', '--type=merge', '-p', '{"status":{"phase":"Running"}}')
    const server = (await daemon.ok('config', 'view', '--raw', '--minify', '-o', 'jsonpath={.clusters[0].cluster.server}')).trim()
    const ca = (await daemon.ok('config', 'view', '--raw', '--minify', '-o', 'jsonpath={.clusters[0].cluster.certificate-authority-data}')).trim()
    viewerConfig = file(
      'viewer.kubeconfig',
      [
        'apiVersion: v1',
        'kind: Config',
        `clusters: [{name: e2e, cluster: {server: "${server}", certificate-authority-data: "${ca}"}}]`,
        'users: [{name: viewer, user: {token: viewer-token}}]',
        'contexts: [{name: viewer, context: {cluster: e2e, user: viewer}}]',
        'current-context: viewer',
      ].join('\n'),
    )
  })

  after(async () => {
    await daemon?.stop()
    await agent?.close()
    await impostor?.close()
    echo?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('kubectl logs reads the container log from the agent, which saw the server\'s client certificate', async () => {
    assert.equal(await daemon.ok('logs', 'web'), 'first line\nsecond line\nthird line\n')
    assert.equal(await daemon.ok('logs', 'web', '--tail=1'), 'third line\n')
    const seen = agent.seen.filter((r) => r.path.startsWith('/containerLogs/default/web/app'))
    assert.deepEqual(seen.map((r) => r.path), ['/containerLogs/default/web/app', '/containerLogs/default/web/app?tailLines=1'])
    assert.ok(seen.every((r) => r.clientCommonName === 'kube-apiserver-kubelet-client'))
    // The caller's own credentials never reach the agent.
    assert.ok(seen.every((r) => r.headers['authorization'] === undefined))
  })

  it('kubectl logs -f streams until kubectl leaves, and the agent\'s stream then ends', async () => {
    const follow = daemon.kubectlStream('logs', '-f', 'web')
    try {
      await eventually(() => assert.match(follow.output(), /follow 2\n/), 20_000)
      assert.match(follow.output(), /^first line\nsecond line\nthird line\nfollow 1\n/)
    } finally {
      follow.child.kill('SIGKILL')
    }
    await eventually(() => assert.equal(agent.openFollows(), 0), 20_000)
  })

  it('answers as upstream: a container to choose, options checked, an unscheduled or unreachable node', async () => {
    // kubectl picks a container itself; the server's own answer shows with --raw.
    const pair = await daemon.kubectl('get', '--raw', '/api/v1/namespaces/default/pods/pair/log')
    assert.notEqual(pair.code, 0)
    assert.match(pair.stderr, /a container name must be specified for pod pair, choose one of: \[a b\]/)
    const negative = await daemon.kubectl('get', '--raw', '/api/v1/namespaces/default/pods/web/log?tailLines=-1')
    assert.match(negative.stderr, /PodLogOptions "web" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0/)
    const lost = await daemon.kubectl('logs', 'lost')
    assert.notEqual(lost.code, 0)
    assert.match(lost.stderr, /dial tcp 127\.0\.0\.1:\d+: connect: connection refused/)
  })

  it('refuses an agent whose certificate another CA signed, and the agent serves nothing', async () => {
    const stray = await daemon.kubectl('logs', 'stray')
    assert.notEqual(stray.code, 0)
    assert.match(stray.stderr, /certificate signed by unknown authority/)
    assert.equal(impostor.seen.length, 0)
  })

  it('kubectl exec -i: stdin comes back on stdout and the exit code is the command\'s', async () => {
    const echoed = await daemon.kubectlWithInput('hello from stdin\n', 'exec', '-i', 'web', '--', 'cat')
    assert.equal(echoed.code, 0, echoed.stderr)
    assert.equal(echoed.stdout, 'hello from stdin\n')
    const failed = await daemon.kubectlWithInput('some input\n', 'exec', '-i', 'web', '--', 'sh', 'exit-with', '3')
    assert.equal(failed.code, 3, failed.stderr)
    assert.equal(failed.stdout, 'some input\n')
    const exec = agent.seen.find((r) => r.path.startsWith('/exec/default/web/app?'))
    assert.ok(exec, 'the agent saw the exec')
    assert.equal(exec.path, '/exec/default/web/app?command=cat&error=1&input=1&output=1')
    assert.equal(exec.clientCommonName, 'kube-apiserver-kubelet-client')
    // kubectl offered v5 and older channel protocols; the agent is offered v5 alone (it carries the end of stdin).
    assert.equal(exec.headers['sec-websocket-protocol'], 'v5.channel.k8s.io')
  })

  it('kubectl port-forward moves bytes both ways through the agent', async () => {
    const forward = daemon.kubectlStream('port-forward', 'pod/web', ':80')
    try {
      let local = 0
      await eventually(() => {
        const m = /Forwarding from 127\.0\.0\.1:(\d+) -> 80/.exec(forward.output())
        assert.ok(m, forward.output())
        local = Number(m[1])
      }, 20_000)
      const payload = Buffer.alloc(256 * 1024, 0)
      for (let i = 0; i < payload.length; i++) payload[i] = (i * 7) & 0xff
      const back = await new Promise<Buffer>((resolve, reject) => {
        const chunks: Buffer[] = []
        let size = 0
        const socket = connect({ host: '127.0.0.1', port: local }, () => socket.write(payload))
        socket.on('data', (c: Buffer) => {
          chunks.push(c)
          size += c.length
          if (size >= payload.length) {
            socket.destroy()
            resolve(Buffer.concat(chunks))
          }
        })
        socket.on('error', reject)
        socket.on('close', () => resolve(Buffer.concat(chunks)))
      })
      assert.equal(back.length, payload.length)
      assert.ok(back.equals(payload), 'the bytes came back unchanged')
      // kubectl tried port-forward over WebSocket first; the agent, as a real one, refused it, and SPDY/3.1 passed through.
      const seen = agent.seen.filter((r) => r.path.startsWith('/portForward/default/web'))
      assert.deepEqual(
        seen.map((r) => [r.path, r.headers.upgrade, r.clientCommonName]),
        [
          ['/portForward/default/web', 'websocket', 'kube-apiserver-kubelet-client'],
          ['/portForward/default/web', 'SPDY/3.1', 'kube-apiserver-kubelet-client'],
        ],
      )
    } finally {
      forward.child.kill('SIGKILL')
    }
  })

  it('kubectl attach -i: stdin comes back on stdout from the attached container', async () => {
    const attached = await daemon.kubectlWithInput('to the running process\n', 'attach', '-i', 'web', '-c', 'app')
    assert.equal(attached.code, 0, attached.stderr)
    assert.equal(attached.stdout, 'to the running process\n')
    assert.ok(agent.seen.some((r) => r.path === '/attach/default/web/app?error=1&input=1&output=1'))
  })

  it('kubectl cp copies a file out of the container (tar over exec)', async () => {
    const target = join(dir, 'motd')
    const copied = await daemon.kubectl('cp', 'web:/etc/motd', target)
    assert.equal(copied.code, 0, copied.stderr)
    assert.equal(readFileSync(target, 'utf8'), 'welcome to the test container\n')
  })

  it('--insecure-skip-tls-verify-backend is the one way past an agent\'s unknown CA, as upstream', async () => {
    assert.equal(await daemon.ok('logs', 'stray', '--insecure-skip-tls-verify-backend'), 'never read\n')
    // The client certificate still went along.
    assert.ok(impostor.seen.every((r) => r.clientCommonName === 'kube-apiserver-kubelet-client'))
  })

  it('a user without pods/exec gets 403 and the agent sees no exec; the same user reads logs', async () => {
    const before = agent.seen.length
    const denied = await daemon.kubectl('--kubeconfig', viewerConfig, 'exec', 'web', '--', 'cat')
    assert.notEqual(denied.code, 0)
    assert.match(denied.stderr, /pods "web" is forbidden: User "viewer" cannot (create|get) resource "pods\/exec" in API group "" in the namespace "default"/)
    assert.equal(agent.seen.slice(before).filter((r) => r.path.startsWith('/exec')).length, 0)
    // The binding reaches the authorizer through a watch.
    await eventually(async () => assert.equal((await daemon.kubectl('--kubeconfig', viewerConfig, 'logs', 'web')).stdout, 'first line\nsecond line\nthird line\n'))
    // The viewer's bearer token stays with the server.
    const read = agent.seen.slice(before).filter((r) => r.path.startsWith('/containerLogs/'))
    assert.ok(read.length >= 1)
    assert.ok(read.every((r) => r.headers['authorization'] === undefined))
  })

  // As upstream's: a loopback node is no proxy target at any port, the agent's own included (logs and exec
  // above still reach it, as upstream reaches a kubelet for them).
  it('nodes/proxy to a loopback node is refused with 400 "address not allowed" at any port, and nothing is sent', async () => {
    const before = agent.seen.length
    const otherPort = (echo.address() as { port: number }).port
    for (const node of ['node-1', `node-1:${agent.port}`, `node-1:${otherPort}`]) {
      const raw = await daemon.kubectl('get', '--raw', `/api/v1/nodes/${node}/proxy/healthz`)
      assert.notEqual(raw.code, 0)
      assert.match(raw.stderr, /Error from server \(BadRequest\): address not allowed/)
    }
    assert.equal(agent.seen.length, before)
  })

  it('a ValidatingAdmissionPolicy on CONNECT refuses kubectl exec with 403, and the agent sees no exec', async () => {
    const policy = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: no-rm}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [''], apiVersions: [v1], operations: [CONNECT], resources: [pods/exec]}]
  validations:
  - expression: "!has(object.command) || object.command.size() == 0 || object.command[0] != 'rm'"
    message: rm is not run here
    reason: Forbidden
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: no-rm}
spec: {policyName: no-rm, validationActions: [Deny]}
`
    await daemon.ok('apply', '-f', daemon.manifest('no-rm.yaml', policy))
    try {
      const refusal = /Error from server \(Forbidden\): pods "web" is forbidden: ValidatingAdmissionPolicy 'no-rm' with binding 'no-rm' denied request: rm is not run here/
      // The policy reaches admission through a watch.
      await eventually(async () => assert.match((await daemon.kubectl('exec', 'web', '--', 'rm', '-rf', '/data')).stderr, refusal))
      const before = agent.seen.length
      const denied = await daemon.kubectl('exec', 'web', '--', 'rm', '-rf', '/data')
      assert.notEqual(denied.code, 0)
      assert.match(denied.stderr, refusal)
      assert.equal(agent.seen.length, before, 'the agent was reached')
    } finally {
      await daemon.ok('delete', '-f', daemon.manifest('no-rm.yaml', policy))
    }
  })
})
