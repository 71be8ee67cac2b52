/**
 * --egress-selector-config-file at start-up: what the server would not do
 * (a proxy, HTTPConnect or GRPC, for etcd) and an HTTPConnect TLS file that
 * cannot be read stop the daemon before it serves, with a message naming
 * the field or file, rather than dialling around the proxy.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { runToExit } from './run-to-exit.js'

const config = (selections: string): string => `apiVersion: apiserver.k8s.io/v1\nkind: EgressSelectorConfiguration\negressSelections:\n${selections}`

describe('--egress-selector-config-file at start-up', () => {
  it('refuses a proxy for etcd, HTTPConnect or GRPC, and a proxy client certificate that cannot be read', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'apiserver-egress-'))
    try {
      const base = ['--cert-dir', join(dir, 'pki'), '--data-dir', join(dir, 'data')]
      const cases: [string, RegExp][] = [
        [
          '- name: etcd\n  connection:\n    proxyProtocol: GRPC\n    transport: {uds: {udsName: /run/konnectivity.sock}}\n',
          /egressSelections\[0\]\.connection\.proxyProtocol: Invalid value: "GRPC": the etcd client of this server cannot be tunnelled/,
        ],
        [
          '- name: etcd\n  connection:\n    proxyProtocol: HTTPConnect\n    transport: {uds: {udsName: /run/proxy.sock}}\n',
          /egressSelections\[0\]\.connection\.proxyProtocol: Invalid value: "HTTPConnect": the etcd client of this server cannot be tunnelled/,
        ],
        [
          `- name: cluster\n  connection:\n    proxyProtocol: HTTPConnect\n    transport: {tcp: {url: "https://127.0.0.1:1", tlsConfig: {clientCert: ${join(dir, 'missing.crt')}, clientKey: ${join(dir, 'missing.key')}}}}\n`,
          /--egress-selector-config-file: cannot read the proxy client certificate .*missing\.crt/,
        ],
      ]
      for (const [selections, message] of cases) {
        const file = join(dir, 'egress.yaml')
        await writeFile(file, config(selections))
        const exit = await runToExit([...base, `--egress-selector-config-file=${file}`])
        assert.equal(exit.listening, false, `started with ${selections}`)
        assert.equal(exit.code, 1)
        assert.match(exit.stderr, message)
      }
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
