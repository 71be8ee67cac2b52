/**
 * The GRPC transport of egress selection: the konnectivity proxy's client
 * protocol over a unix socket. Each tunnelled connection is one `Proxy`
 * stream: a dial request naming `host:port`, the proxy's dial response
 * (an error, or the connection's id), then the bytes both ways as data
 * packets, and a close request when the server is done. The connection is
 * handed out as a Duplex that keeps backpressure: a side that does not read
 * pauses the stream.
 */
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Duplex } from 'node:stream'
import { type Client, type ClientDuplexStream, credentials, loadPackageDefinition } from '@grpc/grpc-js'
import { loadSync } from '@grpc/proto-loader'
import { PROXY_DIAL_BACKSTOP_MS, type TunnelDialer } from './egress-dialer.js'

interface Packet {
  type: 'DIAL_REQ' | 'DIAL_RSP' | 'CLOSE_REQ' | 'CLOSE_RSP' | 'DATA' | 'DIAL_CLS'
  dialRequest?: { protocol: string; address: string; random: number }
  dialResponse?: { error: string; connectID: number; random: number }
  data?: { connectID: number; error?: string; data: Uint8Array }
  closeRequest?: { connectID: number }
  closeResponse?: { error: string; connectID: number }
}

interface ProxyStub extends Client {
  Proxy(): ClientDuplexStream<Packet, Packet>
}

type StubClass = new (target: string, creds: ReturnType<typeof credentials.createInsecure>, options: object) => ProxyStub

/** The .proto in runtimes/node/proto/, one folder up; from the built dist/ tree, the one in the source tree it was built from. */
function protoPath(file: string): string {
  const candidates = [new URL(`../proto/${file}`, import.meta.url), new URL(`../../../runtimes/node/proto/${file}`, import.meta.url)]
  const found = candidates.map((u) => fileURLToPath(u)).find((p) => existsSync(p))
  if (!found) throw new Error(`proto/${file} is missing from the installation`)
  return found
}

let stubClass: StubClass | undefined
function proxyServiceClass(): StubClass {
  stubClass ??= (loadPackageDefinition(loadSync(protoPath('konnectivity-client.proto'), { keepCase: true, longs: Number, enums: String, defaults: true })) as unknown as {
    ProxyService: StubClass
  }).ProxyService
  return stubClass
}

/**
 * One tunnelled connection as a socket-like Duplex: the HTTP client's agent
 * calls a socket's keep-alive and timeout setters, which mean nothing here.
 */
class TunnelStream extends Duplex {
  constructor(
    private readonly call: ClientDuplexStream<Packet, Packet>,
    private readonly connectID: number,
  ) {
    super()
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    this.call.write({ type: 'DATA', data: { connectID: this.connectID, data: chunk } }, done)
  }
  override _final(done: (err?: Error | null) => void): void {
    this.call.write({ type: 'CLOSE_REQ', closeRequest: { connectID: this.connectID } }, () => {
      this.call.end()
      done()
    })
  }
  override _read(): void {
    this.call.resume()
  }
  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    this.call.cancel()
    done(err)
  }
  setKeepAlive(): this {
    return this
  }
  setNoDelay(): this {
    return this
  }
  setTimeout(): this {
    return this
  }
  ref(): this {
    return this
  }
  unref(): this {
    return this
  }
}

/** The dialer of a GRPC selection on the unix socket `socketPath`. */
export function konnectivityDialer(socketPath: string): TunnelDialer {
  const target = socketPath.startsWith('@') ? `unix:\0${socketPath.slice(1)}` : `unix:${socketPath}`
  const Stub = proxyServiceClass()
  let client: ProxyStub | undefined
  const dial = (host: string, port: number): ReturnType<TunnelDialer> => {
    client ??= new Stub(target, credentials.createInsecure(), {})
    const address = `${host.includes(':') ? `[${host}]` : host}:${port}`
    const call = client.Proxy()
    const random = Math.floor(Math.random() * Number.MAX_SAFE_INTEGER)
    return new Promise((resolve, reject) => {
      let stream: TunnelStream | undefined
      // As upstream's client, a dial the proxy never answers is given up after its backstop.
      const backstop = setTimeout(() => {
        call.cancel()
        reject(new Error(`dial ${address} through proxy ${JSON.stringify(socketPath)} failed: dial timeout, backstop`))
      }, PROXY_DIAL_BACKSTOP_MS)
      const answered = (): void => clearTimeout(backstop)
      call.on('data', (packet: Packet) => {
        if (!stream) {
          if (packet.type !== 'DIAL_RSP' || packet.dialResponse?.random !== random) return
          answered()
          if (packet.dialResponse.error) {
            call.cancel()
            reject(new Error(`dial ${address} through proxy ${JSON.stringify(socketPath)} failed: ${packet.dialResponse.error}`))
            return
          }
          stream = new TunnelStream(call, packet.dialResponse.connectID)
          resolve(stream as unknown as Awaited<ReturnType<TunnelDialer>>)
          return
        }
        if (packet.type === 'DATA' && packet.data) {
          if (!stream.push(Buffer.from(packet.data.data))) call.pause()
        } else if (packet.type === 'CLOSE_RSP') {
          stream.push(null)
        }
      })
      call.on('error', (err: Error) => {
        answered()
        if (stream) stream.destroy(err)
        else reject(new Error(`dialing proxy ${JSON.stringify(socketPath)} failed: ${err.message}`))
      })
      call.on('end', () => {
        answered()
        if (stream) stream.push(null)
        else reject(new Error(`dialing proxy ${JSON.stringify(socketPath)} failed: the stream ended before the dial was answered`))
      })
      call.write({ type: 'DIAL_REQ', dialRequest: { protocol: 'tcp', address, random } })
    })
  }
  const close = (): void => {
    client?.close()
    client = undefined
  }
  return Object.assign(dial, { close })
}
