import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ConfigFileError, problemText } from '../../../core/config/decode.js'
import { egressProxies, loadEgressSelectorConfiguration } from '../../../core/config/egress-selector.js'

const file = (selections: string): string => `apiVersion: apiserver.k8s.io/v1beta1\nkind: EgressSelectorConfiguration\negressSelections:\n${selections}`

function problems(text: string): string[] {
  try {
    loadEgressSelectorConfiguration(text, 'egress.yaml')
  } catch (err) {
    assert.ok(err instanceof ConfigFileError, String(err))
    return err.problems.map(problemText)
  }
  return []
}

describe('EgressSelectorConfiguration (--egress-selector-config-file)', () => {
  it('accepts Direct for controlplane, cluster and etcd', () => {
    const text = file('- name: controlplane\n  connection: {proxyProtocol: Direct}\n- name: cluster\n  connection: {proxyProtocol: Direct}\n- name: etcd\n  connection: {proxyProtocol: Direct}\n')
    assert.deepEqual(problems(text), [])
  })

  it('accepts HTTPConnect over TCP with TLS, plain TCP or a unix socket for controlplane and cluster', () => {
    const config = loadEgressSelectorConfiguration(
      file(
        '- name: cluster\n  connection:\n    proxyProtocol: HTTPConnect\n    transport: {tcp: {url: "https://proxy:8131", tlsConfig: {caBundle: /ca.crt, clientCert: /c.crt, clientKey: /c.key}}}\n' +
          '- name: master\n  connection:\n    proxyProtocol: HTTPConnect\n    transport: {uds: {udsName: /run/proxy.sock}}\n' +
          '- name: etcd\n  connection: {proxyProtocol: Direct}\n',
      ),
      'egress.yaml',
    )
    assert.deepEqual(Object.fromEntries(egressProxies(config)), {
      cluster: { kind: 'tcp', url: 'https://proxy:8131', tls: { caBundleFile: '/ca.crt', clientCertFile: '/c.crt', clientKeyFile: '/c.key' } },
      controlplane: { kind: 'uds', socketPath: '/run/proxy.sock' },
    })
    const plain = file('- name: cluster\n  connection:\n    proxyProtocol: HTTPConnect\n    transport: {tcp: {url: "http://proxy:8131"}}\n')
    assert.deepEqual(problems(plain), [])
  })

  it('accepts GRPC (konnectivity) on a unix socket, and checks its transport as upstream does', () => {
    const config = loadEgressSelectorConfiguration(file('- name: cluster\n  connection:\n    proxyProtocol: GRPC\n    transport: {uds: {udsName: /run/konnectivity.sock}}\n'), 'egress.yaml')
    assert.deepEqual(Object.fromEntries(egressProxies(config)), { cluster: { kind: 'grpc', socketPath: '/run/konnectivity.sock' } })
    const sel = (transport: string) => `- name: controlplane\n  connection:\n    proxyProtocol: GRPC\n${transport}`
    assert.deepEqual(problems(file(sel(''))), ['egressSelections[0].connection.transport: Required value: transport must be set for GRPC'])
    assert.deepEqual(problems(file(sel('    transport: {tcp: {url: "https://p:1"}}\n'))), ['egressSelections[0].connection.transport.uds: Required value: UDS must be set with GRPC'])
  })

  it('refuses a proxy for etcd, naming the field, rather than connecting around it', () => {
    const text = file(
      '- name: etcd\n  connection:\n    proxyProtocol: HTTPConnect\n    transport: {uds: {udsName: /run/proxy.sock}}\n',
    )
    assert.deepEqual(problems(text), [
      'egressSelections[0].connection.proxyProtocol: Invalid value: "HTTPConnect": the etcd client of this server cannot be tunnelled through a proxy: only "Direct" is supported for the etcd selection',
    ])
    const grpc = file('- name: etcd\n  connection:\n    proxyProtocol: GRPC\n    transport: {uds: {udsName: /run/konnectivity.sock}}\n')
    assert.match(problems(grpc).join('\n'), /egressSelections\[0\]\.connection\.proxyProtocol: Invalid value: "GRPC": the etcd client of this server cannot be tunnelled/)
  })

  it('checks an HTTPConnect transport as upstream does', () => {
    const sel = (transport: string) => `- name: cluster\n  connection:\n    proxyProtocol: HTTPConnect\n${transport}`
    assert.deepEqual(problems(file(sel(''))), ['egressSelections[0].connection.transport: Required value: transport must be set for HTTPConnect'])
    assert.deepEqual(problems(file(sel('    transport: {tcp: {url: "https://p:1"}, uds: {udsName: /s}}\n'))), [
      'egressSelections[0].connection.transport.tcp: Invalid value: "tcp and uds": TCP and UDS cannot both be set',
    ])
    assert.deepEqual(problems(file(sel('    transport: {}\n'))), ['egressSelections[0].connection.transport.tcp: Required value: one of TCP or UDS must be set'])
    assert.deepEqual(problems(file(sel('    transport: {uds: {udsName: ""}}\n'))), [
      'egressSelections[0].connection.transport.uds.udsName: Invalid value: "nil": UDSName should be present for UDS connections',
    ])
    assert.deepEqual(problems(file(sel('    transport: {tcp: {url: "socks5://p:1"}}\n'))), [
      'egressSelections[0].connection.transport.tcp.url: Invalid value: "socks5://p:1": supported connection protocols are http:// and https://',
    ])
    assert.deepEqual(problems(file(sel('    transport: {tcp: {url: "https://p:1"}}\n'))), [
      'egressSelections[0].connection.transport.tcp.tlsConfig: Required value: TLSConfig must be present when using HTTPS',
    ])
    assert.deepEqual(problems(file(sel('    transport: {tcp: {url: "https://p:1", tlsConfig: {caBundle: /ca}}}\n'))), [
      'egressSelections[0].connection.transport.tcp.tlsConfig.clientCert: Invalid value: "nil": Using TLS requires clientCert',
      'egressSelections[0].connection.transport.tcp.tlsConfig.clientKey: Invalid value: "nil": Using TLS requires clientKey',
    ])
    assert.deepEqual(problems(file(sel('    transport: {tcp: {url: "http://p:1", tlsConfig: {clientCert: /c, clientKey: /k}}}\n'))), [
      'egressSelections[0].connection.transport.tcp.tlsConfig: Invalid value: "nil": TLSConfig config should not be present when using HTTP',
    ])
  })

  it('checks names, duplicates, protocols and a transport given to Direct', () => {
    const text = file(
      '- name: nodes\n  connection: {proxyProtocol: Direct}\n- name: cluster\n  connection: {proxyProtocol: Direct}\n- name: cluster\n  connection: {proxyProtocol: Carrier}\n- name: etcd\n  connection:\n    proxyProtocol: Direct\n    transport: {uds: {udsName: /x}}\n',
    )
    assert.deepEqual(problems(text), [
      'egressSelections[0].name: Unsupported value: "nodes": supported values: "controlplane", "cluster", "etcd"',
      'egressSelections[2].name: Duplicate value: "cluster"',
      'egressSelections[2].connection.proxyProtocol: Unsupported value: "Carrier": supported values: "HTTPConnect", "GRPC", "Direct"',
      'egressSelections[3].connection.transport: Forbidden: transport must be empty for the Direct proxy protocol',
    ])
  })

  it('refuses unknown fields', () => {
    assert.match(problems(file('- name: etcd\n  connection: {proxyProtocol: Direct, via: x}\n')).join('\n'), /via/)
  })
})
