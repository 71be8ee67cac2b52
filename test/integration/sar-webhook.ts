/**
 * An authorization webhook for tests: HTTPS on 127.0.0.1 with a CA made
 * for the test, which demands a client certificate from that CA, records
 * every SubjectAccessReview it gets, and answers what `decide` says.
 */
import { createServer, type Server } from 'node:https'
import type { AddressInfo } from 'node:net'
import type { TLSSocket } from 'node:tls'
import { type CertificateAuthority, type CertificateKeyPair, createCertificateAuthority, issueClientCertificate, issueServingCertificate } from '../../core/pki/certificates.js'

export interface ReceivedReview {
  path: string
  /** The common name of the client certificate the caller presented. */
  clientCommonName: string
  body: { apiVersion: string; kind: string; spec: Record<string, any> }
}

/** A status to send, or a raw reply: `{ status: 500, text }` for a failure, `{ text }` for a malformed body. */
export type WebhookAnswer = { allowed?: boolean; denied?: boolean; reason?: string } | { raw: { status: number; text: string } }

export interface SarWebhook {
  url: string
  ca: CertificateAuthority
  /** What the API server presents. */
  client: CertificateKeyPair
  received: ReceivedReview[]
  decide: (review: ReceivedReview) => WebhookAnswer
  close(): Promise<void>
}

export async function startSarWebhook(decide: SarWebhook['decide']): Promise<SarWebhook> {
  const ca = await createCertificateAuthority({ commonName: 'authz-webhook-test-ca' })
  const serving = await issueServingCertificate(ca, { commonName: 'authz-webhook', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] })
  const client = await issueClientCertificate(ca, { commonName: 'kube-apiserver', organizations: [] })
  const hook: SarWebhook = { url: '', ca, client, received: [], decide, close: async () => {} }
  const server: Server = createServer(
    { cert: serving.certificate, key: serving.privateKey, ca: ca.certificate, requestCert: true, rejectUnauthorized: true },
    (req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const peer = (req.socket as TLSSocket).getPeerCertificate()
        const review: ReceivedReview = { path: req.url ?? '', clientCommonName: String(peer.subject?.CN ?? ''), body: JSON.parse(Buffer.concat(chunks).toString()) }
        hook.received.push(review)
        const answer = hook.decide(review)
        if ('raw' in answer) {
          res.writeHead(answer.raw.status, { 'content-type': 'application/json' })
          res.end(answer.raw.text)
          return
        }
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ apiVersion: review.body.apiVersion, kind: 'SubjectAccessReview', status: { allowed: false, ...answer } }))
      })
    },
  )
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  hook.url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/authorize`
  hook.close = async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
  return hook
}

/** A server's options that authorize every request by `hook` alone, asking it each time (no cached answers). */
export function authorizedBy(hook: SarWebhook) {
  return {
    authorizationModes: ['Webhook'],
    authorizationWebhook: {
      connection: { url: hook.url, certificateAuthority: hook.ca.certificate, clientCertificate: hook.client.certificate, clientKey: hook.client.privateKey },
      version: 'v1' as const,
      authorizedTTLMs: 0,
      unauthorizedTTLMs: 0,
    },
  }
}
