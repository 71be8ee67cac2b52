/**
 * Connecting to etcd: endpoints (`--kvstore-servers`), TLS
 * (`--kvstore-cafile`/`--kvstore-certfile`/`--kvstore-keyfile`), a deadline
 * on every unary call, gRPC keepalive and reconnect settings, and the
 * explicit fault policy (etcd-fault-policy.ts).
 */
import { readFile } from 'node:fs/promises'
import { Etcd3, type IOptions } from 'etcd3'
import { type CircuitOptions, faultHandling } from './etcd-fault-policy.js'

/** PEM contents (not paths): see `readEtcdTlsFiles` for the daemon's file flags. */
export interface EtcdTls {
  /** CA bundle that signed etcd's serving certificate; absent = the system's roots. */
  ca?: string | Uint8Array
  /** Client certificate and key, for etcd started with --client-cert-auth. */
  cert?: string | Uint8Array
  key?: string | Uint8Array
}

export interface EtcdConnectionOptions {
  /** `scheme://host:port` of each member (`--kvstore-servers`). https members use TLS. */
  endpoints: string[]
  tls?: EtcdTls
  /** Deadline of each request (not of watches). @default 10000 */
  requestTimeoutMs?: number
  /** The per-member circuit breaker. @default { failureThreshold: 3, openMs: 1000 } */
  circuit?: CircuitOptions
}

/** Reads the three `--kvstore-*file` flags' files; an unset path stays unset. */
export async function readEtcdTlsFiles(files: { caFile?: string; certFile?: string; keyFile?: string }): Promise<EtcdTls | undefined> {
  const read = async (flag: string, path: string | undefined) => {
    if (!path) return undefined
    try {
      return await readFile(path)
    } catch (err) {
      throw new Error(`${flag}: cannot read ${path}: ${(err as Error).message}`)
    }
  }
  const [ca, cert, key] = await Promise.all([
    read('--kvstore-cafile', files.caFile),
    read('--kvstore-certfile', files.certFile),
    read('--kvstore-keyfile', files.keyFile),
  ])
  if (!ca && !cert && !key) return undefined
  const tls: EtcdTls = {}
  if (ca) tls.ca = ca
  if (cert) tls.cert = cert
  if (key) tls.key = key
  return tls
}

export function createEtcdClient(opts: EtcdConnectionOptions): Etcd3 {
  if (opts.endpoints.length === 0) throw new Error('etcd: at least one endpoint is required')
  const timeout = opts.requestTimeoutMs ?? 10000
  const options: IOptions = {
    hosts: opts.endpoints,
    // Watches live long; every other call gets a deadline so a silent etcd cannot hang a request.
    defaultCallOptions: (context) => (context.isStream ? {} : { deadline: Date.now() + timeout }),
    grpcOptions: {
      // As upstream's client: notice a dead connection within ~40s even when nothing is sent.
      'grpc.keepalive_time_ms': 30000,
      'grpc.keepalive_timeout_ms': 10000,
      // gRPC backs off up to two minutes between reconnects by default; etcd restarts should heal in seconds.
      'grpc.initial_reconnect_backoff_ms': 100,
      'grpc.max_reconnect_backoff_ms': 1000,
      // A list of many objects easily exceeds gRPC's 4 MiB default.
      'grpc.max_receive_message_length': -1,
    },
    faultHandling: faultHandling(opts.circuit, opts.endpoints.length),
  }
  const tls = opts.tls
  if (tls && (tls.ca || tls.cert || tls.key)) {
    if (!tls.cert !== !tls.key) throw new Error('etcd: a client certificate needs its key, and a key its certificate')
    options.credentials = {
      // gRPC falls back to the system's roots when no CA is given; etcd3's type insists on a Buffer.
      rootCertificate: (tls.ca ? Buffer.from(tls.ca) : null) as Buffer,
      ...(tls.cert && tls.key ? { certChain: Buffer.from(tls.cert), privateKey: Buffer.from(tls.key) } : {}),
    }
  }
  return new Etcd3(options)
}
