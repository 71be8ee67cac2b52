/**
 * A small real ExternalJWTSigner (v1alpha1) for tests: a gRPC server on a
 * unix socket that signs with local keys and publishes the keys it is told
 * to, so a test can rotate them, hide one, or make the signer misbehave.
 */
import { createPublicKey, generateKeyPairSync, sign as cryptoSign, type KeyObject } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadPackageDefinition, Server, ServerCredentials, status, type ServiceDefinition } from '@grpc/grpc-js'
import { loadSync } from '@grpc/proto-loader'

const PROTO = new URL('../../runtimes/node/proto/externaljwt-v1alpha1.proto', import.meta.url)

export interface SignerKey {
  kid: string
  privateKey: KeyObject
  alg: 'ES256' | 'RS256'
  /** Published as verify-only: left out of discovery, never to sign. */
  exclude?: boolean
}

export function signerKey(kid: string, kind: 'ec' | 'rsa' = 'ec'): SignerKey {
  const { privateKey } = kind === 'ec' ? generateKeyPairSync('ec', { namedCurve: 'P-256' }) : generateKeyPairSync('rsa', { modulusLength: 2048 })
  return { kid, privateKey, alg: kind === 'ec' ? 'ES256' : 'RS256' }
}

/** Signs `header.payload` (both base64url) with a key as JWS wants it (ECDSA as r||s). */
export function jwsSignature(key: SignerKey, signingInput: string): string {
  const signature =
    key.alg === 'ES256'
      ? cryptoSign('sha256', Buffer.from(signingInput), { key: key.privateKey, dsaEncoding: 'ieee-p1363' })
      : cryptoSign('sha256', Buffer.from(signingInput), key.privateKey)
  return signature.toString('base64url')
}

export function jwsHeader(fields: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify(fields)).toString('base64url')
}

export interface TestSigner {
  socketPath: string
  /** The keys FetchKeys answers with; change it to rotate. */
  published: SignerKey[]
  /** The key Sign uses. */
  signing: SignerKey
  maxTokenExpirationSeconds: number
  refreshHintSeconds: number
  /** Replaces the header Sign answers with (to test a misbehaving signer). */
  headerOverride?: Record<string, unknown>
  /** Sign, FetchKeys and Metadata fail with UNAVAILABLE while true. */
  failing: boolean
  calls: { sign: number; fetchKeys: number; metadata: number }
  /** Every payload Sign was asked to sign (base64url). */
  signed: string[]
  close(): Promise<void>
}

export async function startTestSigner(initial: { keys?: SignerKey[]; maxTokenExpirationSeconds?: number; refreshHintSeconds?: number } = {}): Promise<TestSigner> {
  const dir = mkdtempSync(join(tmpdir(), 'jwt-signer-'))
  const socketPath = join(dir, 'signer.sock')
  const keys = initial.keys ?? [signerKey('key-1')]
  const first = keys[0]
  if (!first) throw new Error('a test signer needs a key')
  const definition = loadSync(PROTO.pathname, { keepCase: false, longs: Number, defaults: true })
  const pkg = loadPackageDefinition(definition) as unknown as { v1alpha1: { ExternalJWTSigner: { service: ServiceDefinition } } }
  const server = new Server()
  const signer: TestSigner = {
    socketPath,
    published: keys,
    signing: first,
    maxTokenExpirationSeconds: initial.maxTokenExpirationSeconds ?? 24 * 3600,
    refreshHintSeconds: initial.refreshHintSeconds ?? 3600,
    failing: false,
    calls: { sign: 0, fetchKeys: 0, metadata: 0 },
    signed: [],
    close: () =>
      new Promise((resolve) => {
        server.tryShutdown(() => {
          rmSync(dir, { recursive: true, force: true })
          resolve()
        })
      }),
  }
  type Handler = (call: { request: any }, callback: (err: { code: number; details: string } | null, answer?: unknown) => void) => void
  const unavailable = { code: status.UNAVAILABLE, details: 'the signer is down' }
  const handlers: Record<string, Handler> = {
    Sign: (call, callback) => {
      signer.calls.sign++
      if (signer.failing) return callback(unavailable)
      const claims = String(call.request.claims)
      signer.signed.push(claims)
      const key = signer.signing
      const header = jwsHeader(signer.headerOverride ?? { alg: key.alg, kid: key.kid, typ: 'JWT' })
      callback(null, { header, signature: jwsSignature(key, `${header}.${claims}`) })
    },
    FetchKeys: (_call, callback) => {
      signer.calls.fetchKeys++
      if (signer.failing) return callback(unavailable)
      callback(null, {
        keys: signer.published.map((k) => ({
          keyId: k.kid,
          key: createPublicKey(k.privateKey).export({ type: 'spki', format: 'der' }),
          excludeFromOidcDiscovery: k.exclude ?? false,
        })),
        dataTimestamp: { seconds: Math.floor(Date.now() / 1000), nanos: 0 },
        refreshHintSeconds: signer.refreshHintSeconds,
      })
    },
    Metadata: (_call, callback) => {
      signer.calls.metadata++
      if (signer.failing) return callback(unavailable)
      callback(null, { maxTokenExpirationSeconds: signer.maxTokenExpirationSeconds })
    },
  }
  server.addService(pkg.v1alpha1.ExternalJWTSigner.service, handlers as never)
  await new Promise<void>((resolve, reject) => {
    server.bindAsync(`unix:${socketPath}`, ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve()))
  })
  return signer
}
