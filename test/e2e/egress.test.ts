/**
 * The daemon with `--egress-selector-config-file` sending the `cluster`
 * selection through a real HTTP CONNECT proxy on a unix socket: `kubectl
 * logs` and `kubectl exec -i` (an upgrade spliced by the listener) reach
 * the node agent only through the proxy, which records the agent's address;
 * with the proxy gone, kubectl fails and the agent sees nothing.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { createCertificateAuthority, issueClientCertificate } from '../../core/pki/certificates.js'
import { type ConnectProxy, startUnixConnectProxy } from '../integration/connect-proxy.js'
import { type NodeAgent, startNodeAgent } from '../integration/node-agent-server.js'
import { Daemon } from './daemon.js'

const CLUSTER = `apiVersion: v1
kind: Node
metadata: {name: node-1}
status:
  addresses: [{type: InternalIP, address: 127.0.0.1}]
  daemonEndpoints: {kubeletEndpoint: {Port: PORT}}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  nodeName: node-1
  containers: [{name: app, image: busybox, stdin: true}]
`

describe('the daemon reaching a node agent through the cluster egress proxy', () => {
  const dir = mkdtempSync(join(tmpdir(), 'egress-e2e-'))
  let daemon: Daemon
  let agent: NodeAgent
  let proxy: ConnectProxy


  before(async () => {
    const clientCA = await createCertificateAuthority({ commonName: 'node-agent-client-ca' })
    const client = await issueClientCertificate(clientCA, { commonName: 'kube-apiserver-kubelet-client', organizations: ['system:masters'] })
    agent = await startNodeAgent(clientCA.certificate)
    proxy = await startUnixConnectProxy(join(dir, 'cluster.sock'))
    const file = (name: string, text: string) => {
      writeFileSync(join(dir, name), text)
      return join(dir, name)
    }
    const egress = [
      'apiVersion: apiserver.k8s.io/v1beta1',
      'kind: EgressSelectorConfiguration',
      'egressSelections:',
      '- name: cluster',
      '  connection:',
      '    proxyProtocol: HTTPConnect',
      `    transport: {uds: {udsName: ${proxy.address}}}`,
      '',
    ].join('\n')
    daemon = await Daemon.start([
      `--egress-selector-config-file=${file('egress.yaml', egress)}`,
      `--nodeagent-certificate-authority=${file('agent-ca.crt', agent.servingCA)}`,
      `--nodeagent-client-certificate=${file('client.crt', client.certificate)}`,
      `--nodeagent-client-key=${file('client.key', client.privateKey)}`,
      '--nodeagent-timeout=5s',
    ])
    agent.logs.set('default/web/app', ['first line', 'second line'])
    await daemon.ok('apply', '-f', daemon.manifest('cluster.yaml', CLUSTER.replace('PORT', String(agent.port))))
  })

  after(async () => {
    await daemon?.stop()
    await agent?.close()
    await proxy?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('kubectl logs goes through the proxy, the agent seeing the server\'s client certificate', async () => {
    assert.equal(await daemon.ok('logs', 'web'), 'first line\nsecond line\n')
    assert.ok(proxy.connects.some((c) => c.target === `127.0.0.1:${agent.port}`), JSON.stringify(proxy.connects))
    assert.equal(agent.seen.at(-1)?.clientCommonName, 'kube-apiserver-kubelet-client')
  })

  it('kubectl exec -i is spliced to the agent through the proxy', async () => {
    const before = proxy.connects.length
    const echoed = await daemon.kubectlWithInput('through the tunnel\n', 'exec', '-i', 'web', '--', 'cat')
    assert.equal(echoed.code, 0, echoed.stderr)
    assert.equal(echoed.stdout, 'through the tunnel\n')
    assert.ok(proxy.connects.length > before)
  })

  it('with the proxy gone, kubectl logs fails and the agent is not reached', async () => {
    await proxy.close()
    const seen = agent.seen.length
    const failed = await daemon.kubectl('logs', 'web')
    assert.notEqual(failed.code, 0)
    assert.match(failed.stderr, /dialing proxy ".*cluster\.sock" failed/)
    assert.equal(agent.seen.length, seen)
  })
})
