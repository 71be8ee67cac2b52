/** A server with a known signing key and a settable clock, and the ways tests talk to it about tokens. */
import assert from 'node:assert/strict'
import { generateKeyPairSync } from 'node:crypto'
import { CompactSign, importPKCS8 } from 'jose'
import { ADMIN_IDENTITY, type ApiServerOptions, createApiServer } from '../../core/index.js'
import type { ConnectionInfo } from '../../core/ports.js'
import type { Storage } from '../../core/storage/interface.js'
import { TestClient } from './harness.js'

/** A request that came over a transport, so that only its credential counts. */
export const network: ConnectionInfo = {}
export const ISSUER = 'https://kubernetes.default.svc.cluster.local'

export function ecKeyPem(curve = 'P-256'): { privateKey: string; publicKey: string } {
  const pair = generateKeyPairSync('ec', { namedCurve: curve })
  return {
    privateKey: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKey: pair.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  }
}

export function rsaKeyPem(): { privateKey: string; publicKey: string } {
  const pair = generateKeyPairSync('rsa', { modulusLength: 2048 })
  return {
    privateKey: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKey: pair.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  }
}

export interface TokenServer {
  api: TestClient
  /** Moves the server's clock. */
  advance(ms: number): void
  now(): Date
  shutdown(): Promise<void>
}

/** `storage`: shared by servers that stand for one server restarted with other flags. */
export async function tokenServer(options: ApiServerOptions = {}, storage?: Storage): Promise<TokenServer> {
  let offset = 0
  const now = () => new Date(Date.now() + offset)
  const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY, ...options }, { now, ...(storage ? { storage } : {}) })
  await server.ready
  return { api: new TestClient(server), advance: (ms) => void (offset += ms), now, shutdown: () => server.shutdown() }
}

export function tokenRequest(spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}): Record<string, unknown> {
  return { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', metadata, spec }
}

/** Asks for a token of `namespace/name` as the administrator; fails the test unless it is issued. */
export async function issueToken(api: TestClient, namespace: string, name: string, spec: Record<string, unknown> = {}): Promise<string> {
  const r = await api.post(`/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, tokenRequest(spec))
  assert.equal(r.status, 201, r.text)
  return r.body.status.token
}

export function decodePart(token: string, index: 0 | 1): Record<string, any> {
  return JSON.parse(Buffer.from(token.split('.')[index] ?? '', 'base64url').toString())
}

const review = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }

/** Who the server takes the bearer of `token` for (the status code and user of a SelfSubjectReview). */
export async function whoami(api: TestClient, token: string): Promise<{ status: number; user: any }> {
  const r = await api.post('/apis/authentication.k8s.io/v1/selfsubjectreviews', review, { connection: network, headers: { authorization: `Bearer ${token}` } })
  return { status: r.status, user: r.body?.status?.userInfo }
}

let attempt = 0

/**
 * A write with a refused credential: a 401 Status, and the object it tried
 * to create is not there afterwards.
 */
export async function assertRefusedAndNothingStored(api: TestClient, token: string): Promise<void> {
  const name = `attempt-${++attempt}`
  const r = await api.post('/api/v1/namespaces/default/configmaps', { metadata: { name }, data: { a: 'b' } }, {
    connection: network,
    headers: { authorization: `Bearer ${token}` },
  })
  assert.equal(r.status, 401, r.text)
  assert.equal(r.body.reason, 'Unauthorized')
  assert.equal((await api.get(`/api/v1/namespaces/default/configmaps/${name}`)).status, 404)
}

export async function create(api: TestClient, path: string, body: Record<string, unknown>): Promise<any> {
  const r = await api.post(path, body)
  assert.equal(r.status, 201, r.text)
  return r.body
}

export function podBody(name: string, serviceAccountName: string, nodeName?: string): Record<string, unknown> {
  return {
    metadata: { name },
    spec: { serviceAccountName, ...(nodeName ? { nodeName } : {}), containers: [{ name: 'c', image: 'busybox' }] },
  }
}

/**
 * A secret-based ("legacy") token of `default/default` naming Secret `secretName`, signed with
 * `privateKey` under the kid the server's own tokens carry, as the token controller once wrote them.
 */
export async function legacyToken(api: TestClient, privateKey: string, secretName: string, serviceAccountUid: string): Promise<string> {
  const kid = decodePart(await issueToken(api, 'default', 'default'), 0).kid
  const claims = {
    iss: 'kubernetes/serviceaccount',
    'kubernetes.io/serviceaccount/namespace': 'default',
    'kubernetes.io/serviceaccount/secret.name': secretName,
    'kubernetes.io/serviceaccount/service-account.name': 'default',
    'kubernetes.io/serviceaccount/service-account.uid': serviceAccountUid,
    sub: 'system:serviceaccount:default:default',
  }
  return new CompactSign(Buffer.from(JSON.stringify(claims))).setProtectedHeader({ alg: 'ES256', kid }).sign(await importPKCS8(privateKey, 'ES256'))
}
