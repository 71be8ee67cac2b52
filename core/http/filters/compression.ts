/**
 * Upstream's APIResponseCompression (beta and on since 1.16): an answer its
 * serializer writes (an object, a list, a Status, discovery) of more than
 * 128 KiB goes out gzip-compressed to a client whose `Accept-Encoding`
 * names gzip, with `Content-Encoding: gzip` and `Vary: Accept-Encoding`.
 * kubectl and client-go ask for gzip on every request and read it back
 * transparently: a LIST of a megabyte crosses the wire as a tenth of that.
 *
 * Outermost in the chain, so that the filters inside it (audit, metrics,
 * `?pretty`) see the answer as it was made. What upstream writes by other
 * means goes out as it is: watches, relayed answers (an aggregated API, a
 * proxy), `/version`, OpenAPI documents, metrics and logs' text.
 */
import type { MiddlewareHandler } from 'hono'
import { type ChainEnv, replaceAnswer } from './context.js'
import { bytesResponse } from '../bytes-response.js'
import { knownSize, withKnownSize } from '../response-size.js'
import { joinedBytes } from '../../machinery/joined-bytes.js'

/** Upstream's defaultGzipThresholdBytes: an answer of this size or less is never compressed. */
export const GZIP_THRESHOLD_BYTES = 128 * 1024

/** A stream stage: what is written to `writable` comes out of `readable`, transformed. */
export interface StreamStage {
  readable: ReadableStream<Uint8Array>
  writable: WritableStream<Uint8Array>
}

/** A gzip compressor as a stream stage; the runtime may supply a faster one (`ServerPorts.gzipStream`). */
export type GzipStream = () => StreamStage

/** The Web's own, at its default level; Node's runtime gives upstream's level 1 (BestSpeed) instead. */
export const webGzipStream: GzipStream = () => new CompressionStream('gzip') as unknown as StreamStage

/** Upstream's responseContentEncodingSupported: one of the comma-separated tokens is `gzip` itself (parameters such as `;q=` make it another). */
export function acceptsGzip(header: string | null | undefined): boolean {
  if (!header) return false
  return header.split(',').some((token) => token.trim() === 'gzip')
}

/** The media types of upstream's serializers; a watch's (`;stream=watch`) is streamed by other means. */
const SERIALIZED_TYPE = /^application\/(?:json|yaml|vnd\.kubernetes\.protobuf)(?:;|$)/

function mayCompress(c: Parameters<MiddlewareHandler<ChainEnv>>[0]): boolean {
  const res = c.res
  if (c.req.method === 'HEAD' || res.body === null || res.headers.has('content-encoding')) return false
  if (res.status === 101 || res.status === 204 || res.status === 304) return false
  if (c.get('relayed') || c.get('requestInfo')?.verb === 'watch') return false
  const type = res.headers.get('content-type') ?? ''
  if (!SERIALIZED_TYPE.test(type) || type.includes('stream=watch')) return false
  const path = c.req.path
  return path !== '/version' && !path.startsWith('/openapi/')
}

function headersOf(res: Response): Headers {
  const headers = new Headers(res.headers)
  headers.delete('content-length')
  return headers
}

function compressed(res: Response, body: ReadableStream<Uint8Array>, gzip: GzipStream): Response {
  const headers = headersOf(res)
  headers.set('content-encoding', 'gzip')
  headers.append('vary', 'Accept-Encoding')
  return new Response(body.pipeThrough(gzip()), { status: res.status, headers })
}

/** A stream of `head`, then what `reader` has left. */
function resumed(head: Uint8Array[], reader: ReadableStreamDefaultReader<Uint8Array>): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of head) controller.enqueue(chunk)
    },
    async pull(controller) {
      const { done, value } = await reader.read()
      if (done) controller.close()
      else controller.enqueue(value)
    },
    cancel: (reason) => reader.cancel(reason),
  })
}

export function responseCompressionFilter(gzip: GzipStream): MiddlewareHandler<ChainEnv> {
  return async (c, next) => {
    await next()
    if (!acceptsGzip(c.req.header('accept-encoding')) || !mayCompress(c)) return
    const res = c.res
    const length = res.headers.get('content-length')
    const size = knownSize(res) ?? (length === null ? undefined : Number(length))
    if (size !== undefined) {
      if (size > GZIP_THRESHOLD_BYTES) replaceAnswer(c, compressed(res, res.body!, gzip))
      return
    }
    // A list written as it is read: its first runs decide, as upstream's writer decides on what it has buffered.
    const reader = res.body!.getReader()
    const head: Uint8Array[] = []
    let read = 0
    while (read <= GZIP_THRESHOLD_BYTES) {
      const { done, value } = await reader.read()
      if (done) {
        const bytes = joinedBytes(head, read)
        const headers: Record<string, string> = {}
        headersOf(res).forEach((value, name) => (headers[name] = value))
        replaceAnswer(c, withKnownSize(bytesResponse(bytes, res.status, headers), bytes))
        return
      }
      head.push(value)
      read += value.byteLength
    }
    replaceAnswer(c, compressed(res, resumed(head, reader), gzip))
  }
}
