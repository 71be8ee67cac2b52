/**
 * The client pairs the daemon presents (--proxy-client-cert-file/--proxy-client-key-file to
 * aggregated servers, --kubelet-client-certificate/--kubelet-client-key to node agents) are
 * checked at start-up: a file that holds no PEM, or a key of another certificate, stops it
 * naming the flag, as upstream's tls.X509KeyPair does, rather than failing each call later.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { readCommandLine } from '../../../core/options/flags/index.js'
import { createCertificateAuthority, issueClientCertificate } from '../../../core/pki/certificates.js'
import { aggregationOptions, StartupError } from '../../../runtimes/node/daemon/daemon-options.js'
import { nodeAgentOptions } from '../../../runtimes/node/daemon/node-agent.js'

let dir = ''
const file = (name: string) => join(dir, name)

function parsed(argv: string[]) {
  const command = readCommandLine(argv)
  if (command.action !== 'run') return assert.fail()
  return command.flags
}

const proxyPair = (cert: string, key: string) =>
  aggregationOptions({}, parsed([`--proxy-client-cert-file=${file(cert)}`, `--proxy-client-key-file=${file(key)}`]))

/** The node-agent flags as the daemon hands them over, given by their upstream names. */
function kubeletPair(cert: string, key: string) {
  const { values } = parsed([`--kubelet-client-certificate=${file(cert)}`, `--kubelet-client-key=${file(key)}`])
  return nodeAgentOptions({
    certificateAuthority: '',
    clientCertificate: values['nodeagent-client-certificate'],
    clientKey: values['nodeagent-client-key'],
    preferredAddressTypes: [],
    timeoutMs: 5000,
  })
}

describe('client key pairs given by flag', () => {
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'client-key-pair-'))
    const ca = await createCertificateAuthority({ commonName: 'client-ca' })
    const one = await issueClientCertificate(ca, { commonName: 'front-proxy-client', organizations: [] })
    const other = await issueClientCertificate(ca, { commonName: 'someone-else', organizations: [] })
    await writeFile(file('client.crt'), one.certificate)
    await writeFile(file('client.key'), one.privateKey)
    await writeFile(file('other.key'), other.privateKey)
    await writeFile(file('garbage'), 'not a PEM file\n')
    await writeFile(file('broken.crt'), '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n')
  })
  after(() => rm(dir, { recursive: true, force: true }))

  it('takes a matching pair', async () => {
    const got = await proxyPair('client.crt', 'client.key')
    assert.ok(got.proxyClientCertificate?.certificate.includes('BEGIN CERTIFICATE'))
    const agent = await kubeletPair('client.crt', 'client.key')
    assert.ok(agent.clientCertificate?.key.includes('PRIVATE KEY'))
  })

  it('refuses the proxy pair when a file holds no PEM, the certificate is malformed, the files are switched or the key is of another certificate', async () => {
    const refused = async (cert: string, key: string, message: string) =>
      assert.rejects(proxyPair(cert, key), (err: Error) => err instanceof StartupError && err.message === message, `${cert} ${key}`)
    await refused('garbage', 'client.key', '--proxy-client-cert-file: tls: failed to find any PEM data in certificate input')
    await refused('broken.crt', 'client.key', '--proxy-client-cert-file: x509: malformed certificate')
    await refused(
      'client.key',
      'client.crt',
      '--proxy-client-cert-file: tls: failed to find certificate PEM data in certificate input, but did find a private key; PEM inputs may have been switched',
    )
    await refused('client.crt', 'garbage', '--proxy-client-key-file: tls: failed to find any PEM data in key input')
    await refused('client.crt', 'other.key', '--proxy-client-key-file: tls: private key does not match public key')
  })

  it('refuses the node-agent pair likewise, naming the flag', async () => {
    await assert.rejects(kubeletPair('garbage', 'client.key'), /^Error: --nodeagent-client-certificate: tls: failed to find any PEM data in certificate input$/)
    await assert.rejects(kubeletPair('client.crt', 'garbage'), /^Error: --nodeagent-client-key: tls: failed to find any PEM data in key input$/)
    await assert.rejects(kubeletPair('client.crt', 'other.key'), /^Error: --nodeagent-client-key: tls: private key does not match public key$/)
  })
})
