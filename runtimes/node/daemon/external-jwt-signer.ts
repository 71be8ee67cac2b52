/**
 * The transport of `--service-account-signing-endpoint`: a gRPC client of
 * the ExternalJWTSigner v1alpha1 service on a unix socket, as upstream
 * dials it (plain text over the socket, authority `localhost`, calls that
 * wait for the connection within their deadline). Core checks the answers.
 */
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { credentials, loadPackageDefinition, Metadata, type Client, type ServiceError } from '@grpc/grpc-js'
import { loadSync } from '@grpc/proto-loader'
import type { ExternalJwtSigner, ExternalSignerKeys } from '../../../core/ports.js'

const PROTO = 'proto/externaljwt-v1alpha1.proto'

/** The .proto in runtimes/node/proto/, one folder up; from the built dist/ tree, the one in the source tree it was built from. */
function protoPath(): string {
  const candidates = [new URL(`../${PROTO}`, import.meta.url), new URL(`../../../runtimes/node/${PROTO}`, import.meta.url)]
  const found = candidates.map((u) => fileURLToPath(u)).find((p) => existsSync(p))
  if (!found) throw new Error(`${PROTO} is missing from the installation`)
  return found
}

type Callback<T> = (err: ServiceError | null, answer: T) => void
type Unary<Req, Res> = (request: Req, metadata: Metadata, options: { deadline: Date }, callback: Callback<Res>) => void

interface SignerClient extends Client {
  Sign: Unary<{ claims: string }, { header: string; signature: string }>
  FetchKeys: Unary<
    Record<string, never>,
    {
      keys: { keyId: string; key: Buffer; excludeFromOidcDiscovery: boolean }[]
      dataTimestamp: { seconds: number; nanos: number } | null
      refreshHintSeconds: number
    }
  >
  Metadata: Unary<Record<string, never>, { maxTokenExpirationSeconds: number }>
}

let signerConstructor: (new (target: string, creds: ReturnType<typeof credentials.createInsecure>, options: object) => SignerClient) | undefined

function signerClass(): NonNullable<typeof signerConstructor> {
  if (!signerConstructor) {
    const definition = loadSync(protoPath(), { keepCase: false, longs: Number, defaults: true, oneofs: true })
    const pkg = loadPackageDefinition(definition) as unknown as { v1alpha1: { ExternalJWTSigner: NonNullable<typeof signerConstructor> } }
    signerConstructor = pkg.v1alpha1.ExternalJWTSigner
  }
  return signerConstructor
}

/** The gRPC target of a socket path: `@name` is an abstract socket, as Go dials it. */
function targetOf(socketPath: string): string {
  return socketPath.startsWith('@') ? `unix:\0${socketPath.slice(1)}` : `unix:${socketPath}`
}

function call<Req, Res>(method: Unary<Req, Res>, client: SignerClient, request: Req, timeoutMs: number): Promise<Res> {
  return new Promise((resolve, reject) => {
    // Wait for the socket within the deadline rather than fail while the signer starts (upstream's WaitForReady).
    const metadata = new Metadata({ waitForReady: true })
    method.call(client, request, metadata, { deadline: new Date(Date.now() + timeoutMs) }, (err, answer) => {
      if (err) reject(new Error(err.details || err.message))
      else resolve(answer)
    })
  })
}

/** A client of the signer at `socketPath`; nothing is dialled before the first call. */
export function externalJwtSigner(socketPath: string): ExternalJwtSigner {
  const Signer = signerClass()
  const client = new Signer(targetOf(socketPath), credentials.createInsecure(), { 'grpc.default_authority': 'localhost' })
  return {
    sign: (claims, timeoutMs) => call(client.Sign, client, { claims }, timeoutMs),
    async fetchKeys(timeoutMs): Promise<ExternalSignerKeys> {
      const answer = await call(client.FetchKeys, client, {}, timeoutMs)
      const ts = answer.dataTimestamp
      return {
        keys: answer.keys.map((k) => ({ keyId: k.keyId, key: new Uint8Array(k.key), excludeFromOidcDiscovery: k.excludeFromOidcDiscovery })),
        ...(ts ? { dataTimestamp: new Date(ts.seconds * 1000 + Math.floor(ts.nanos / 1e6)) } : {}),
        refreshHintSeconds: answer.refreshHintSeconds,
      }
    },
    metadata: (timeoutMs) => call(client.Metadata, client, {}, timeoutMs),
    close: () => client.close(),
  }
}
