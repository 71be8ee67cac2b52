/**
 * An audit webhook receiver for tests: HTTPS on 127.0.0.1 with a CA made
 * for the test, demanding a client certificate from that CA, keeping every
 * EventList it is sent. It can answer, fail with 500, hang (take the
 * request and never answer), or be stopped and started again on its port.
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:https'
import type { AddressInfo, Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TLSSocket } from 'node:tls'
import { type CertificateAuthority, type CertificateKeyPair, createCertificateAuthority, issueClientCertificate, issueServingCertificate } from '../../core/pki/certificates.js'

export interface ReceivedList {
  clientCommonName: string
  contentType: string
  body: { kind: string; apiVersion: string; items: Record<string, any>[] }
}

export type ReceiverBehaviour = 'answer' | 'fail' | 'hang'

export interface AuditReceiver {
  url: string
  port: number
  ca: CertificateAuthority
  client: CertificateKeyPair
  received: ReceivedList[]
  /** Every event received, in order. */
  events(): Record<string, any>[]
  behaviour: ReceiverBehaviour
  /** Requests taken and left unanswered ('hang'). */
  hanging: number
  /** Requests answered with 500 ('fail'). */
  failures: number
  /** A kubeconfig naming the receiver, its CA and the client certificate, written to a new directory. */
  kubeconfigFile(): string
  stop(): Promise<void>
  /** Listens again on the same port. */
  start(): Promise<void>
}

export async function startAuditReceiver(): Promise<AuditReceiver> {
  const ca = await createCertificateAuthority({ commonName: 'audit-receiver-test-ca' })
  const serving = await issueServingCertificate(ca, { commonName: 'audit-receiver', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] })
  const client = await issueClientCertificate(ca, { commonName: 'kube-apiserver-audit', organizations: [] })
  let server: Server | undefined
  const sockets = new Set<Socket>()
  let port = 0
  const receiver: AuditReceiver = {
    url: '',
    port: 0,
    ca,
    client,
    received: [],
    events: () => receiver.received.flatMap((r) => r.body.items),
    behaviour: 'answer',
    hanging: 0,
    failures: 0,
    kubeconfigFile() {
      const b64 = (text: string) => Buffer.from(text).toString('base64')
      const dir = mkdtempSync(join(tmpdir(), 'audit-webhook-'))
      const file = join(dir, 'audit-webhook.kubeconfig')
      writeFileSync(
        file,
        [
          'apiVersion: v1',
          'kind: Config',
          'clusters:',
          '- name: receiver',
          '  cluster:',
          `    server: ${receiver.url}`,
          `    certificate-authority-data: ${b64(ca.certificate)}`,
          'users:',
          '- name: apiserver',
          '  user:',
          `    client-certificate-data: ${b64(client.certificate)}`,
          `    client-key-data: ${b64(client.privateKey)}`,
          'contexts:',
          '- name: audit',
          '  context: {cluster: receiver, user: apiserver}',
          'current-context: audit',
          '',
        ].join('\n'),
      )
      return file
    },
    async start() {
      server = createServer({ cert: serving.certificate, key: serving.privateKey, ca: ca.certificate, requestCert: true, rejectUnauthorized: true }, (req, res) => {
        const chunks: Buffer[] = []
        req.on('data', (c: Buffer) => chunks.push(c))
        req.on('end', () => {
          if (receiver.behaviour === 'hang') {
            receiver.hanging++
            return
          }
          if (receiver.behaviour === 'fail') {
            receiver.failures++
            res.writeHead(500).end('receiver is failing')
            return
          }
          const peer = (req.socket as TLSSocket).getPeerCertificate()
          receiver.received.push({
            clientCommonName: String(peer.subject?.CN ?? ''),
            contentType: String(req.headers['content-type'] ?? ''),
            body: JSON.parse(Buffer.concat(chunks).toString()),
          })
          // An empty answer, as many receivers give: the server must not need a body.
          res.writeHead(200).end()
        })
      })
      // Every socket, also one still in its TLS handshake (closeAllConnections knows only those past it).
      server.on('connection', (socket: Socket) => {
        sockets.add(socket)
        socket.once('close', () => sockets.delete(socket))
      })
      await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve))
      port = (server.address() as AddressInfo).port
      receiver.port = port
      receiver.url = `https://127.0.0.1:${port}/audit`
    },
    async stop() {
      const s = server
      server = undefined
      if (!s) return
      // A retry connecting while this closes would otherwise hold close() until the client gives up (30 s).
      const closed = new Promise((resolve) => s.close(resolve))
      for (const socket of sockets) socket.destroy()
      sockets.clear()
      await closed
    },
  }
  await receiver.start()
  return receiver
}
