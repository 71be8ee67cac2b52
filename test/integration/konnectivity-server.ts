/**
 * A small konnectivity proxy server for the egress tests: the client
 * protocol over gRPC on a unix socket. Each `Proxy` stream asks for one
 * dial; the server records the address, connects to it over TCP (or
 * answers the dial with an error for an address it is told to refuse) and
 * moves the bytes as data packets until either side closes.
 */
import { connect } from 'node:net'
import { fileURLToPath } from 'node:url'
import { loadPackageDefinition, Server, ServerCredentials, type ServerDuplexStream, type ServiceDefinition } from '@grpc/grpc-js'
import { loadSync } from '@grpc/proto-loader'

interface Packet {
  type: string
  dialRequest?: { address: string; random: number }
  data?: { connectID: number; data: Buffer }
  closeRequest?: { connectID: number }
}

export interface KonnectivityServer {
  socketPath: string
  dials: string[]
  refused: Set<string>
  close(): Promise<void>
}

export async function startKonnectivityServer(socketPath: string): Promise<KonnectivityServer> {
  const proto = fileURLToPath(new URL('../../runtimes/node/proto/konnectivity-client.proto', import.meta.url))
  const root = loadPackageDefinition(loadSync(proto, { keepCase: true, longs: Number, enums: String, defaults: true })) as unknown as {
    ProxyService: { service: ServiceDefinition }
  }
  const server = new Server()
  const konnectivity: KonnectivityServer = { socketPath, dials: [], refused: new Set(), close: async () => {} }
  let nextID = 1
  server.addService(root.ProxyService.service, {
    Proxy(call: ServerDuplexStream<Packet, unknown>) {
      let socket: ReturnType<typeof connect> | undefined
      call.on('data', (packet: Packet) => {
        if (packet.type === 'DIAL_REQ' && packet.dialRequest) {
          const { address, random } = packet.dialRequest
          konnectivity.dials.push(address)
          if (konnectivity.refused.has(address)) {
            call.write({ type: 'DIAL_RSP', dialResponse: { random, error: 'dial refused by the test proxy' } })
            call.end()
            return
          }
          const at = address.lastIndexOf(':')
          const connectID = nextID++
          socket = connect({ host: address.slice(0, at).replace(/^\[(.*)\]$/, '$1'), port: Number(address.slice(at + 1)) }, () => {
            call.write({ type: 'DIAL_RSP', dialResponse: { random, connectID } })
          })
          socket.on('data', (chunk: Buffer) => call.write({ type: 'DATA', data: { connectID, data: chunk } }))
          socket.on('error', () => socket?.destroy())
          socket.on('close', () => {
            call.write({ type: 'CLOSE_RSP', closeResponse: { connectID } })
            call.end()
          })
        } else if (packet.type === 'DATA' && packet.data) {
          socket?.write(packet.data.data)
        } else if (packet.type === 'CLOSE_REQ') {
          socket?.end()
        }
      })
      call.on('error', () => socket?.destroy())
      call.on('cancelled', () => socket?.destroy())
    },
  })
  await new Promise<void>((resolve, reject) => server.bindAsync(`unix:${socketPath}`, ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())))
  konnectivity.close = async () => server.forceShutdown()
  return konnectivity
}
