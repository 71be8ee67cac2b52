/**
 * A bearer token in a WebSocket subprotocol, as upstream's websocket
 * ProtocolAuthenticator reads it: a browser cannot set an `Authorization`
 * header on a WebSocket, so its client offers
 * `base64url.bearer.authorization.k8s.io.<the token in unpadded base64url>`
 * among the protocols of `Sec-WebSocket-Protocol`. Only WebSocket upgrades
 * are read. The token may come once, and with another protocol beside it
 * (the one the server answers with). Once the token is accepted its protocol
 * is taken out of the request, so nothing the request is passed on to (a
 * node agent, an aggregated server, a proxied service) sees the credential.
 */
import type { Authenticator } from './authenticator.js'
import { isUpgradeRequest } from '../proxy/upgrade.js'
import { type TokenAuthenticator, tokenUser } from './bearer-token.js'

const PREFIX = 'base64url.bearer.authorization.k8s.io.'

/** Upstream's wsstream.IsWebSocketRequest: an upgrade, to `websocket`. */
const isWebSocketRequest = (request: Request): boolean => isUpgradeRequest(request) && request.headers.get('upgrade')!.toLowerCase() === 'websocket'

/** Go's base64.RawURLEncoding: no padding, no other alphabet; undefined for text it refuses. */
function rawUrlBase64(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return undefined
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4))
  return Uint8Array.from(binary, (c) => c.charCodeAt(0))
}

const utf8 = new TextDecoder('utf-8', { fatal: true })

export function websocketProtocolAuthenticator(tokens: TokenAuthenticator, apiAudiences: readonly string[] = []): Authenticator {
  const asked = apiAudiences.length ? apiAudiences : undefined
  return {
    async authenticate(request, _connection, notes) {
      const header = request.headers.get('sec-websocket-protocol')
      if (header === null || !header.includes(PREFIX) || !isWebSocketRequest(request)) return undefined
      let token: string | undefined
      const others: string[] = []
      // Several header lines are one list, joined by commas.
      for (const offered of header.split(',')) {
        const protocol = offered.trim()
        if (!protocol.startsWith(PREFIX)) {
          others.push(protocol)
          continue
        }
        if (token !== undefined) return { error: 'multiple base64.bearer.authorization tokens specified' }
        const bytes = rawUrlBase64(protocol.slice(PREFIX.length))
        if (!bytes) return { error: 'invalid base64.bearer.authorization token encoding' }
        try {
          token = utf8.decode(bytes)
        } catch {
          return { error: 'invalid base64.bearer.authorization token' }
        }
      }
      if (!token) return undefined
      // One protocol is left to answer with once the token's is taken out.
      if (!others.length) return { error: 'missing additional subprotocol' }
      const result = await tokenUser(tokens, token, asked, notes)
      if ('user' in result) request.headers.set('sec-websocket-protocol', others.join(','))
      return result
    },
  }
}
