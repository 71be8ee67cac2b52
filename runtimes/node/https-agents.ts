/**
 * HTTPS agents per way of trusting and presenting (CA bundle, server name,
 * client certificate, skip verify), kept alive between calls. Bundles change
 * as the objects that carry them do (CRDs, webhook configurations,
 * APIServices), so only the recent agents are kept.
 */
import { Agent as HttpsAgent } from 'node:https'
import { decodeCABundle } from './tls-errors.js'

/** What decides an agent: the trust and the identity of a connection. */
export interface TlsTarget {
  /** base64 of the PEM CAs that alone are trusted; the platform's CAs when absent. */
  caBundle?: string
  serverName?: string
  clientCertificate?: { certificate: string; key: string }
  insecureSkipTLSVerify?: boolean
}

const MAX_KEPT_AGENTS = 64

export interface HttpsAgents {
  agentFor(target: TlsTarget): HttpsAgent
  destroy(): void
}

export function httpsAgents(): HttpsAgents {
  const agents = new Map<string, HttpsAgent>()
  return {
    agentFor(target) {
      const ca = target.caBundle ? decodeCABundle(target.caBundle) : undefined
      const { serverName, clientCertificate: client, insecureSkipTLSVerify: insecure } = target
      const key = [ca ?? '', serverName ?? '', client?.certificate ?? '', client?.key ?? '', insecure ? 'insecure' : ''].join('\u0000')
      let agent = agents.get(key)
      if (agent) return agent
      // `ca` replaces the platform's CAs: the bundle is all that is trusted.
      agent = new HttpsAgent({
        keepAlive: true,
        ...(ca ? { ca } : {}),
        ...(serverName ? { servername: serverName } : {}),
        ...(client ? { cert: client.certificate, key: client.key } : {}),
        ...(insecure ? { rejectUnauthorized: false } : {}),
      })
      if (agents.size >= MAX_KEPT_AGENTS) {
        const [oldestKey, oldest] = agents.entries().next().value!
        oldest.destroy()
        agents.delete(oldestKey)
      }
      agents.set(key, agent)
      return agent
    },
    destroy() {
      for (const agent of agents.values()) agent.destroy()
      agents.clear()
    },
  }
}
