/**
 * The transport to KMS plugins: gRPC clients of upstream's
 * KeyManagementService v2 and v1beta1 on the plugin's unix socket, dialled
 * as upstream dials them (plain text over the socket, authority
 * `localhost`, each call bounded by the provider's `timeout`). A failed
 * call reads as Go's gRPC errors print (`rpc error: code = ... desc = ...`).
 */
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import type { Client, Metadata, ServiceError } from '@grpc/grpc-js'
import type { KmsClientFactory, KmsEndpoint, KmsV1Client, KmsV2Client } from '../../../core/encryption/kms/client.js'

/**
 * gRPC and its proto loader, read when the first client is made: loading them
 * takes some 100 ms, which every `import` of `kube-apiserver-ts/node` (which
 * exports this factory) paid before, KMS or not.
 */
let grpcModules: { grpc: typeof import('@grpc/grpc-js'); loadSync: typeof import('@grpc/proto-loader').loadSync } | undefined
function grpcLibrary(): NonNullable<typeof grpcModules> {
  if (!grpcModules) {
    const load = createRequire(import.meta.url)
    grpcModules = { grpc: load('@grpc/grpc-js') as typeof import('@grpc/grpc-js'), loadSync: (load('@grpc/proto-loader') as typeof import('@grpc/proto-loader')).loadSync }
  }
  return grpcModules
}

/** The .proto in runtimes/node/proto/, one folder up; from the built dist/ tree, the one in the source tree it was built from. */
function protoPath(file: string): string {
  const candidates = [new URL(`../proto/${file}`, import.meta.url), new URL(`../../../runtimes/node/proto/${file}`, import.meta.url)]
  const found = candidates.map((u) => fileURLToPath(u)).find((p) => existsSync(p))
  if (!found) throw new Error(`proto/${file} is missing from the installation`)
  return found
}

type Callback<T> = (err: ServiceError | null, answer: T) => void
type Unary<Req, Res> = (request: Req, metadata: Metadata, options: { deadline: Date }, callback: Callback<Res>) => void
type ClientClass<C> = new (target: string, creds: ReturnType<typeof import('@grpc/grpc-js').credentials.createInsecure>, options: object) => C

interface V2Stub extends Client {
  Status: Unary<Record<string, never>, { version: string; healthz: string; keyId: string }>
  Encrypt: Unary<{ plaintext: Uint8Array; uid: string }, { ciphertext: Buffer; keyId: string; annotations: Record<string, Buffer> }>
  Decrypt: Unary<{ ciphertext: Uint8Array; uid: string; keyId: string; annotations: Record<string, Uint8Array> }, { plaintext: Buffer }>
}

interface V1Stub extends Client {
  Version: Unary<{ version: string }, { version: string; runtimeName: string; runtimeVersion: string }>
  Encrypt: Unary<{ version: string; plain: Uint8Array }, { cipher: Buffer }>
  Decrypt: Unary<{ version: string; cipher: Uint8Array }, { plain: Buffer }>
}

const loaded = new Map<string, unknown>()
function stubClass<C>(file: string, pkg: 'v2' | 'v1beta1'): ClientClass<C> {
  if (!loaded.has(file)) {
    const { grpc, loadSync } = grpcLibrary()
    const definition = loadSync(protoPath(file), { keepCase: false, longs: Number, defaults: true })
    const root = grpc.loadPackageDefinition(definition) as unknown as Record<string, { KeyManagementService: ClientClass<C> }>
    loaded.set(file, root[pkg]!.KeyManagementService)
  }
  return loaded.get(file) as ClientClass<C>
}

/** The gRPC target of a socket path: `@name` is an abstract socket, as Go dials it. */
function targetOf(socketPath: string): string {
  return socketPath.startsWith('@') ? `unix:\0${socketPath.slice(1)}` : `unix:${socketPath}`
}

/** gRPC's status codes by Go's names for them (`DeadlineExceeded`), made with the first failed call. */
let codeNames: Map<number, string> | undefined
const codeName = (code: number): string | number =>
  (codeNames ??= new Map(Object.entries(grpcLibrary().grpc.status).map(([name, c]) => [c as number, name.split('_').map((w) => w[0] + w.slice(1).toLowerCase()).join('')]))).get(code) ?? code

/**
 * A failed call's description as Go's client gives it: its own deadline is
 * `context deadline exceeded` (grpc-js adds timings of each stage to it).
 */
function description(err: ServiceError): string {
  if (err.code === grpcLibrary().grpc.status.DEADLINE_EXCEEDED && /^Deadline exceeded after /.test(err.details)) return 'context deadline exceeded'
  return err.details || err.message
}

function call<C, Req, Res>(client: C, method: Unary<Req, Res>, request: Req, timeoutMs: number): Promise<Res> {
  return new Promise((resolve, reject) => {
    // Not waiting for a plugin that is down: its calls fail at once, so reads answer 500 rather than hang to the deadline.
    method.call(client, request, new (grpcLibrary().grpc.Metadata)(), { deadline: new Date(Date.now() + timeoutMs) }, (err, answer) => {
      if (err) reject(new Error(`rpc error: code = ${codeName(err.code)} desc = ${description(err)}`))
      else resolve(answer)
    })
  })
}

// A plugin that comes back on its socket is reached within seconds (gRPC's reconnect backoff would otherwise grow to minutes).
const CHANNEL_OPTIONS = { 'grpc.default_authority': 'localhost', 'grpc.initial_reconnect_backoff_ms': 500, 'grpc.max_reconnect_backoff_ms': 5000 }

const owned = (b: Buffer | Uint8Array): Uint8Array => new Uint8Array(b)

function v2Client(endpoint: KmsEndpoint): KmsV2Client {
  const Stub = stubClass<V2Stub>('kms-v2.proto', 'v2')
  const client = new Stub(targetOf(endpoint.socketPath), grpcLibrary().grpc.credentials.createInsecure(), CHANNEL_OPTIONS)
  const t = endpoint.timeoutMs
  return {
    status: () => call(client, client.Status, {}, t),
    async encrypt(uid, plaintext) {
      const answer = await call(client, client.Encrypt, { plaintext, uid }, t)
      const annotations = Object.fromEntries(Object.entries(answer.annotations ?? {}).map(([k, v]) => [k, owned(v)]))
      return { ciphertext: owned(answer.ciphertext), keyId: answer.keyId, annotations }
    },
    async decrypt(uid, request) {
      const answer = await call(client, client.Decrypt, { ciphertext: request.ciphertext, uid, keyId: request.keyId, annotations: request.annotations }, t)
      return owned(answer.plaintext)
    },
    close: () => client.close(),
  }
}

const V1_API = 'v1beta1'

function v1Client(endpoint: KmsEndpoint): KmsV1Client {
  const Stub = stubClass<V1Stub>('kms-v1beta1.proto', 'v1beta1')
  const client = new Stub(targetOf(endpoint.socketPath), grpcLibrary().grpc.credentials.createInsecure(), CHANNEL_OPTIONS)
  const t = endpoint.timeoutMs
  return {
    version: async () => (await call(client, client.Version, { version: V1_API }, t)).version,
    encrypt: async (plain) => owned((await call(client, client.Encrypt, { version: V1_API, plain }, t)).cipher),
    decrypt: async (cipher) => owned((await call(client, client.Decrypt, { version: V1_API, cipher }, t)).plain),
    close: () => client.close(),
  }
}

/** KMS plugin clients over gRPC; nothing is dialled before the first call. */
export const nodeKmsClients: KmsClientFactory = { v1: v1Client, v2: v2Client }
