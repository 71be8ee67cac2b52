import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ConfigFileError, problemText } from '../../../core/config/decode.js'
import { loadEgressSelectorConfiguration } from '../../../core/config/egress-selector.js'

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

  it('refuses a proxy it would not use, naming the field, rather than connecting around it', () => {
    const text = file(
      '- name: cluster\n  connection:\n    proxyProtocol: HTTPConnect\n    transport: {tcp: {url: "https://konnectivity:8131"}}\n- name: etcd\n  connection:\n    proxyProtocol: GRPC\n    transport: {uds: {udsName: /run/konnectivity.sock}}\n',
    )
    assert.deepEqual(problems(text), [
      'egressSelections[0].connection.proxyProtocol: Invalid value: "HTTPConnect": this server connects directly: only "Direct" is supported, and a proxy it would not use must not be configured',
      'egressSelections[1].connection.proxyProtocol: Invalid value: "GRPC": this server connects directly: only "Direct" is supported, and a proxy it would not use must not be configured',
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
