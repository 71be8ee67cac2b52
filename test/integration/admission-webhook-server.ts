/**
 * An admission webhook for tests: HTTPS on 127.0.0.1 with a CA made for
 * the test (its serving certificate also names `<service>.<namespace>.svc`
 * for Service references), recording every AdmissionReview it gets and
 * answering what the handler of the request's path says. A handler may
 * return `'hang'` to never answer.
 */
import { createServer, type Server } from 'node:https'
import type { AddressInfo } from 'node:net'
import { createCertificateAuthority, issueServingCertificate } from '../../core/pki/certificates.js'

export interface ReceivedAdmissionReview {
  /** The path without its query. */
  path: string
  /** The query upstream's client adds (`timeout=10s`). */
  query: string
  body: { apiVersion: string; kind: string; request: Record<string, any> }
}

export type AdmissionHandler = (review: ReceivedAdmissionReview) => Record<string, unknown> | 'hang'

export interface AdmissionWebhookServer {
  /** `https://127.0.0.1:<port>` */
  base: string
  port: number
  /** base64 of the CA's PEM, as a clientConfig's caBundle. */
  caBundle: string
  received: ReceivedAdmissionReview[]
  /** Replies whose last byte was handed to the connection. */
  repliesWritten: number
  handlers: Map<string, AdmissionHandler>
  close(): Promise<void>
}

/** A v1 (or the request's version) answer to `review`: `allowed` plus any response fields. */
export function answer(review: ReceivedAdmissionReview, response: Record<string, unknown>): Record<string, unknown> {
  return { apiVersion: review.body.apiVersion, kind: 'AdmissionReview', response: { uid: review.body.request['uid'], allowed: true, ...response } }
}

/** A JSONPatch answer. */
export function patchAnswer(review: ReceivedAdmissionReview, ops: unknown[]): Record<string, unknown> {
  return answer(review, { patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(ops)).toString('base64') })
}

export async function startAdmissionWebhook(serviceNames: string[] = []): Promise<AdmissionWebhookServer> {
  const ca = await createCertificateAuthority({ commonName: 'admission-webhook-test-ca' })
  const serving = await issueServingCertificate(ca, { commonName: 'admission-webhook', dnsNames: ['localhost', ...serviceNames], ipAddresses: ['127.0.0.1'] })
  const hook: AdmissionWebhookServer = {
    base: '',
    port: 0,
    caBundle: Buffer.from(ca.certificate).toString('base64'),
    received: [],
    repliesWritten: 0,
    handlers: new Map(),
    close: async () => {},
  }
  const server: Server = createServer({ cert: serving.certificate, key: serving.privateKey }, (req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'https://webhook')
      const review: ReceivedAdmissionReview = { path: url.pathname, query: url.search.slice(1), body: JSON.parse(Buffer.concat(chunks).toString()) }
      hook.received.push(review)
      const handler = hook.handlers.get(review.path)
      if (!handler) {
        res.writeHead(404).end('no handler')
        return
      }
      const reply = handler(review)
      if (reply === 'hang') return
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify(reply), () => hook.repliesWritten++)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  hook.port = (server.address() as AddressInfo).port
  hook.base = `https://127.0.0.1:${hook.port}`
  hook.close = async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
  return hook
}
