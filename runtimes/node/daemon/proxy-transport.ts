/**
 * The proxy transport of the Node runtime: HTTPS that trusts exactly the
 * target's caBundle (the platform's CAs without one), checks the serving
 * certificate against the target's server name, presents the proxy client
 * certificate, and streams both bodies with backpressure (Node streams
 * bridged to Web streams), so a proxied watch or download holds no more
 * than a few chunks in memory. Connections are kept per TLS setting.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { Readable } from 'node:stream'
import type { ReadableStream as NodeWebReadableStream } from 'node:stream/web'
import { endToEndHeaders, type ForwardedRequest, forwardedUrl, type ProxyTarget, type ProxyTransport } from '../../../core/proxy/transport.js'
import type { EgressDialers } from '../adapter/egress-dialer.js'
import { httpsAgents } from './https-agents.js'
import { connectionFailure } from '../adapter/tls-errors.js'

export interface NodeProxyTransport extends ProxyTransport {
  /** Drops the kept connections. */
  close(): void
}


/** The backend's answer as a Web Response, its body read as the client reads it. */
function toResponse(res: IncomingMessage): Response {
  const headers = new Headers()
  for (const [name, value] of Object.entries(res.headers)) {
    if (value === undefined) continue
    if (Array.isArray(value)) for (const v of value) headers.append(name, v)
    else headers.set(name, value)
  }
  const status = res.statusCode ?? 502
  const nullBody = status === 204 || status === 304 || status < 200
  if (nullBody) res.resume()
  const body = nullBody ? null : (Readable.toWeb(res) as unknown as ReadableStream<Uint8Array>)
  return new Response(body, { status, statusText: res.statusMessage ?? '', headers: endToEndHeaders(headers) })
}

/** `dialers`: the proxies of the egress selections (a target's `egress` picks one). */
export function nodeProxyTransport(dialers?: EgressDialers): NodeProxyTransport {
  const tlsAgents = httpsAgents(dialers)


  function roundTrip(target: ProxyTarget, forwarded: ForwardedRequest): Promise<Response> {
    const url = forwardedUrl(target.origin, forwarded.path)
    const secure = url.protocol === 'https:'
    const headers: Record<string, string | string[]> = {}
    for (const [name, value] of endToEndHeaders(forwarded.headers)) headers[name] = value
    for (const [name, value] of forwarded.headerLines ?? []) {
      const key = name.toLowerCase()
      const current = headers[key]
      headers[key] = current === undefined ? [value] : [...(Array.isArray(current) ? current : [current]), value]
    }
    return new Promise<Response>((resolve, reject) => {
      const req = (secure ? httpsRequest : httpRequest)(url, {
        method: forwarded.method,
        agent: secure ? tlsAgents.agentFor(target) : tlsAgents.plainAgentFor(target.egress),
        headers,
        ...(target.serverName && secure ? { servername: target.serverName } : {}),
      })
      let settled = false
      const fail = (err: unknown): void => {
        if (settled) return
        settled = true
        reject(connectionFailure(err, url))
      }
      // Settled here, not by the request's 'error': a request still waiting for its connection (an egress
      // proxy that never answers the dial) emits none when destroyed, and would be waited for forever.
      const giveUp = (err: Error): void => {
        req.destroy(err)
        fail(err)
      }
      // Only the dial is bounded: a watch may stream for as long as the client wants it.
      const dialTimer = target.dialTimeoutMs ? setTimeout(() => giveUp(new Error(`dial tcp ${url.host}: i/o timeout`)), target.dialTimeoutMs) : undefined
      req.once('socket', (socket) => {
        const connected = (): void => clearTimeout(dialTimer)
        if (!socket.connecting) connected()
        else socket.once(secure ? 'secureConnect' : 'connect', connected)
      })
      req.on('error', fail)
      req.once('response', (res) => {
        clearTimeout(dialTimer)
        settled = true
        resolve(toResponse(res))
      })
      // A 101 to a request that asked for no upgrade (these do not): refused as Go's reverse proxy
      // refuses it, instead of waiting for an answer that never comes.
      req.once('upgrade', (res: IncomingMessage, socket: { destroy(): void }) => {
        clearTimeout(dialTimer)
        socket.destroy()
        fail(new Error(`backend tried to switch protocol ${JSON.stringify(res.headers.upgrade ?? '')} when "" was requested`))
      })
      const onAbort = (): void => {
        clearTimeout(dialTimer)
        giveUp(new Error('the request was cancelled'))
      }
      forwarded.signal?.addEventListener('abort', onAbort, { once: true })
      req.once('close', () => forwarded.signal?.removeEventListener('abort', onAbort))
      if (forwarded.body && forwarded.method !== 'GET' && forwarded.method !== 'HEAD') {
        const body = Readable.fromWeb(forwarded.body as unknown as NodeWebReadableStream<Uint8Array>)
        body.on('error', (err) => req.destroy(err))
        body.pipe(req)
      } else {
        req.end()
      }
    })
  }

  return {
    roundTrip,
    close() {
      tlsAgents.destroy()
    },
  }
}
