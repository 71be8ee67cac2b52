/**
 * The node-agent flags read into core's NodeAgentOptions (the CA, the
 * client pair read from their files), and the Node runtime's check of the
 * hosts nodes/proxy may reach: the name resolved, every address global
 * unicast (upstream's isProxyableHostname).
 */
import { lookup } from 'node:dns/promises'
import { readFile } from 'node:fs/promises'
import { isGlobalUnicast } from '../../../core/nodeagent/addresses.js'
import type { NodeAgentOptions } from '../../../core/nodeagent/connection.js'
import { checkClientKeyPair } from './client-key-pair.js'

export interface NodeAgentFlags {
  certificateAuthority: string
  clientCertificate: string
  clientKey: string
  preferredAddressTypes: readonly string[]
  timeoutMs: number
  /** `--max-connection-bytes-per-sec`; 0 is unlimited. */
  maxBytesPerSec?: number
}

/** Reads the files the flags name; throws naming the flag of a file that cannot be read or used, or a pair given by half. */
export async function nodeAgentOptions(flags: NodeAgentFlags): Promise<NodeAgentOptions> {
  const read = (flag: string, path: string) =>
    readFile(path, 'utf8').catch((err: Error) => {
      throw new Error(`--${flag}: cannot read ${path}: ${err.message}`)
    })
  if (Boolean(flags.clientCertificate) !== Boolean(flags.clientKey))
    throw new Error('--nodeagent-client-certificate and --nodeagent-client-key must be given together')
  const ca = flags.certificateAuthority ? await read('nodeagent-certificate-authority', flags.certificateAuthority) : undefined
  if (ca !== undefined && !ca.includes('-----BEGIN CERTIFICATE-----'))
    throw new Error(`--nodeagent-certificate-authority: ${flags.certificateAuthority} holds no PEM certificate`)
  const pair = flags.clientCertificate
    ? { certificate: await read('nodeagent-client-certificate', flags.clientCertificate), key: await read('nodeagent-client-key', flags.clientKey) }
    : undefined
  if (pair) checkClientKeyPair(pair, { certificate: 'nodeagent-client-certificate', key: 'nodeagent-client-key' })
  return {
    preferredAddressTypes: flags.preferredAddressTypes,
    timeoutMs: flags.timeoutMs,
    ...(flags.maxBytesPerSec ? { maxBytesPerSec: flags.maxBytesPerSec } : {}),
    ...(ca ? { caBundle: Buffer.from(ca).toString('base64') } : {}),
    ...(pair ? { clientCertificate: pair } : {}),
  }
}

/** Refuses a host whose addresses are not all global unicast. */
export async function checkProxyableHost(host: string): Promise<void> {
  const addresses = await lookup(host, { all: true })
  if (addresses.length === 0) throw new Error('no addresses for hostname')
  if (!addresses.every((a) => isGlobalUnicast(a.address))) throw new Error('address not allowed')
}
