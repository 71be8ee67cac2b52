/**
 * The pieces of the node-agent connections that decide where a call goes:
 * Go's IsGlobalUnicast over literals, upstream's SplitSchemeNamePort, the
 * preferred node address and its error, the agent port default, and the
 * agent's log query in Go's encoding.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { isGlobalUnicast } from '../../../core/nodeagent/addresses.js'
import { agentPort, agentTarget, preferredAddress } from '../../../core/nodeagent/connection.js'
import { agentLogQuery, chooseContainer, parsePodLogOptions, validatePodLogOptions } from '../../../core/nodeagent/logs.js'
import { splitSchemeNamePort } from '../../../core/nodeagent/proxy.js'
import { agentPortQuery, agentStreamQuery, narrowToV5 } from '../../../core/nodeagent/streams.js'
import type { KubeObject } from '../../../core/machinery/object.js'

describe('isGlobalUnicast', () => {
  it('passes public and private addresses, refuses loopback, link-local, multicast, unspecified, broadcast and names', () => {
    for (const ip of ['10.0.0.1', '192.168.1.5', '8.8.8.8', '2001:db8::1', 'fd00::5', '::ffff:10.1.2.3']) assert.equal(isGlobalUnicast(ip), true, ip)
    for (const ip of ['127.0.0.1', '127.8.9.1', '169.254.169.254', '224.0.0.1', '0.0.0.0', '255.255.255.255', '::1', '::', 'fe80::1', 'ff02::1', '::ffff:127.0.0.1', 'localhost', 'node-1', '1.2.3', ''])
      assert.equal(isGlobalUnicast(ip), false, ip)
  })
})

describe('splitSchemeNamePort', () => {
  it('reads name, name:port and scheme:name:port with http or https only', () => {
    assert.deepEqual(splitSchemeNamePort('web'), { scheme: '', name: 'web', port: '' })
    assert.deepEqual(splitSchemeNamePort('web:8080'), { scheme: '', name: 'web', port: '8080' })
    assert.deepEqual(splitSchemeNamePort('https:web:443'), { scheme: 'https', name: 'web', port: '443' })
    for (const bad of ['ftp:web:21', ':80', 'a:b:c:d', 'https::443']) assert.equal(splitSchemeNamePort(bad), undefined, bad)
  })
})

describe('the node agent address', () => {
  const node = {
    metadata: { name: 'n1' },
    status: { addresses: [{ type: 'Hostname', address: 'n1' }, { type: 'InternalIP', address: '10.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: 10255 } } },
  } as unknown as KubeObject

  it('takes the first preferred type the node lists, and its reported port', () => {
    assert.equal(preferredAddress(node, ['InternalIP', 'Hostname']), '10.0.0.1')
    assert.equal(preferredAddress(node, ['ExternalIP', 'Hostname']), 'n1')
    assert.equal(agentPort(node), 10255)
    assert.equal(agentPort({ metadata: {} } as KubeObject), 10250)
  })

  it('names the known addresses when none is preferred, as Go prints them', () => {
    assert.throws(() => preferredAddress(node, ['ExternalIP']), { message: 'no preferred addresses found; known addresses: [{Hostname n1} {InternalIP 10.0.0.1}]' })
  })

  it('verifies with the CA when given, and skips verification only without one or when the caller asks', () => {
    const withCA = agentTarget({ preferredAddressTypes: [], timeoutMs: 5000, caBundle: 'Q0E=' }, 'fd00::1', 10250)
    assert.deepEqual(withCA, { origin: 'https://[fd00::1]:10250', caBundle: 'Q0E=', dialTimeoutMs: 5000, egress: 'cluster' })
    assert.equal(agentTarget({ preferredAddressTypes: [], timeoutMs: 5000, caBundle: 'Q0E=' }, 'h', 1, true).insecureSkipTLSVerify, true)
    assert.equal(agentTarget({ preferredAddressTypes: [], timeoutMs: 5000 }, 'h', 1).insecureSkipTLSVerify, true)
  })
})

describe('pod log options', () => {
  it('become the agent query in Go\'s sorted encoding', () => {
    const options = parsePodLogOptions(new URLSearchParams('follow=true&tailLines=10&timestamps=1&sinceTime=2024-05-01T10:00:00.5Z&limitBytes=7&container=c'))
    assert.equal(agentLogQuery(options), 'follow=true&limitBytes=7&sinceTime=2024-05-01T10%3A00%3A00Z&tailLines=10&timestamps=true')
  })

  it('are checked as upstream checks them', () => {
    const errors = validatePodLogOptions(parsePodLogOptions(new URLSearchParams('tailLines=-1&limitBytes=0&sinceSeconds=5&sinceTime=2024-05-01T10:00:00Z')))
    assert.deepEqual(
      errors.map((e) => e.field),
      ['tailLines', 'limitBytes', ''],
    )
    assert.throws(() => parsePodLogOptions(new URLSearchParams('follow=maybe')), { message: 'strconv.ParseBool: parsing "maybe": invalid syntax' })
  })

  it('name a container or the pod has exactly one', () => {
    const pod = { metadata: { name: 'p' }, spec: { containers: [{ name: 'a' }, { name: 'b' }], initContainers: [{ name: 'init' }] } } as unknown as KubeObject
    assert.equal(chooseContainer(pod, 'init'), 'init')
    assert.throws(() => chooseContainer(pod, undefined), { message: 'a container name must be specified for pod p, choose one of: [a b] or one of the init containers: [init]' })
    assert.throws(() => chooseContainer(pod, 'z'), { message: 'container z is not valid for pod p' })
  })
})

describe('exec, attach and port-forward queries', () => {
  it('are what the agent reads', () => {
    assert.equal(agentStreamQuery('exec', new URLSearchParams('command=sh&command=-c&command=echo%20hi&stdin=true&stdout=true&stderr=true&tty=false&container=c')), 'command=sh&command=-c&command=echo+hi&error=1&input=1&output=1')
    assert.equal(agentStreamQuery('attach', new URLSearchParams('stdin=true&stdout=true&tty=true&command=ignored')), 'input=1&output=1&tty=1')
    assert.equal(agentPortQuery(new URLSearchParams('ports=8080&ports=53')), 'port=8080&port=53')
    assert.throws(() => agentPortQuery(new URLSearchParams('ports=0')), { message: 'invalid port "0"' })
  })
})

describe('the WebSocket protocols offered to the agent', () => {
  const ws = (protocols: string) => new Headers({ upgrade: 'websocket', 'sec-websocket-protocol': protocols })
  it('narrows an exec or attach offering v5 to v5 alone, and leaves the rest as sent', () => {
    assert.equal(narrowToV5('exec', ws('v5.channel.k8s.io, v4.channel.k8s.io, channel.k8s.io')).get('sec-websocket-protocol'), 'v5.channel.k8s.io')
    assert.equal(narrowToV5('attach', ws('v4.channel.k8s.io,base64.channel.k8s.io')).get('sec-websocket-protocol'), 'v4.channel.k8s.io,base64.channel.k8s.io')
    assert.equal(narrowToV5('portforward', ws('SPDY/3.1+portforward.k8s.io')).get('sec-websocket-protocol'), 'SPDY/3.1+portforward.k8s.io')
    assert.equal(narrowToV5('exec', new Headers({ upgrade: 'SPDY/3.1', 'x-stream-protocol-version': 'v4.channel.k8s.io' })).get('x-stream-protocol-version'), 'v4.channel.k8s.io')
  })
})
