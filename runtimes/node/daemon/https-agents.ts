/**
 * HTTPS agents per way of trusting and presenting (CA bundle, server name,
 * client certificate, skip verify) and per egress selection, kept alive
 * between calls. Bundles change as the objects that carry them do (CRDs,
 * webhook configurations, APIServices), so only the recent agents are kept.
 * An agent of a selection that goes through a proxy opens each connection
 * as a tunnel and speaks its TLS inside it; the plain-HTTP agents do the same
 * without TLS.
 */
import { Agent as HttpAgent } from 'node:http'
import { Agent as HttpsAgent } from 'node:https'
import type { Socket } from 'node:net'
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls'
import type { EgressSelectionName } from '../../../core/config/egress-selector.js'
import type { EgressDialers, TunnelDialer } from '../adapter/egress-dialer.js'
import { decodeCABundle } from '../adapter/tls-errors.js'

/** What decides an agent: the trust and the identity of a connection, and the selection it belongs to. */
export interface TlsTarget {
  /** base64 of the PEM CAs that alone are trusted; the platform's CAs when absent. */
  caBundle?: string
  serverName?: string
  clientCertificate?: { certificate: string; key: string }
  insecureSkipTLSVerify?: boolean
  /** The egress selection whose proxy carries the connection; absent: dialled directly. */
  egress?: EgressSelectionName
}

const MAX_KEPT_AGENTS = 64

export interface HttpsAgents {
  agentFor(target: TlsTarget): HttpsAgent
  /** The agent for plain HTTP of a selection (its tunnels, or direct). */
  plainAgentFor(egress?: EgressSelectionName): HttpAgent
  destroy(): void
}

type CreateConnection = (options: ConnectionOptions & { host?: string; port?: number }, done: (err: Error | null, socket?: Socket) => void) => undefined

/** A createConnection that tunnels first, then (for HTTPS) starts TLS on the tunnel. */
function tunnelledConnection(dial: TunnelDialer, secure: boolean): CreateConnection {
  return (options, done) => {
    const host = (options.host ?? 'localhost').replace(/^\[(.*)\]$/, '$1')
    const port = Number(options.port ?? (secure ? 443 : 80))
    dial(host, port).then(
      (socket) => done(null, secure ? tlsConnect({ ...options, socket }) : socket.resume()),
      (err: Error) => done(err),
    )
    return undefined
  }
}

export function httpsAgents(dialers: EgressDialers = new Map()): HttpsAgents {
  const agents = new Map<string, HttpsAgent>()
  const plainAgents = new Map<string, HttpAgent>()
  return {
    agentFor(target) {
      const ca = target.caBundle ? decodeCABundle(target.caBundle) : undefined
      const { serverName, clientCertificate: client, insecureSkipTLSVerify: insecure } = target
      const dial = target.egress ? dialers.get(target.egress) : undefined
      const key = [ca ?? '', serverName ?? '', client?.certificate ?? '', client?.key ?? '', insecure ? 'insecure' : '', dial ? target.egress : ''].join('\u0000')
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
      if (dial) (agent as unknown as { createConnection: CreateConnection }).createConnection = tunnelledConnection(dial, true)
      if (agents.size >= MAX_KEPT_AGENTS) {
        const [oldestKey, oldest] = agents.entries().next().value!
        oldest.destroy()
        agents.delete(oldestKey)
      }
      agents.set(key, agent)
      return agent
    },
    plainAgentFor(egress) {
      const dial = egress ? dialers.get(egress) : undefined
      const key = dial ? egress! : ''
      let agent = plainAgents.get(key)
      if (agent) return agent
      agent = new HttpAgent({ keepAlive: true })
      if (dial) (agent as unknown as { createConnection: CreateConnection }).createConnection = tunnelledConnection(dial, false)
      plainAgents.set(key, agent)
      return agent
    },
    destroy() {
      for (const agent of agents.values()) agent.destroy()
      for (const agent of plainAgents.values()) agent.destroy()
      agents.clear()
      plainAgents.clear()
    },
  }
}
