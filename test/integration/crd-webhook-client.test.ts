/**
 * The Node webhook client against a real conversion webhook over HTTPS on
 * loopback: it trusts exactly the caBundle it is given, checks the name a
 * service reference implies, gives up at its deadline, and carries a
 * ConversionReview round trip for a custom resource's conversion.
 */
import assert from 'node:assert/strict'
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { customResourceConversion } from '../../core/crd/conversion.js'
import { fetchWebhookClient } from '../../core/crd/webhook-client.js'
import { StatusError } from '../../core/machinery/status-error.js'
import { createCertificateAuthority, issueServingCertificate } from '../../core/pki/certificates.js'
import type { CustomResourceDefinition } from '../../core/resources/apiextensions/types.js'
import type { KubeObject } from '../../core/machinery/object.js'
import { nodeWebhookClient, type NodeWebhookClient } from '../../runtimes/node/daemon/webhook-client.js'

const base64 = (pem: string) => Buffer.from(pem).toString('base64')

/** A conversion webhook: v1 spec.cronSpec <-> v2 spec.schedule; `/fail` answers 500, `/slow` never answers. */
function handle(req: IncomingMessage, res: ServerResponse): void {
  if (req.url === '/slow') return
  const chunks: Buffer[] = []
  req.on('data', (c: Buffer) => chunks.push(c))
  req.on('end', () => {
    if (req.url === '/fail') {
      res.writeHead(500, { 'content-type': 'text/plain' })
      res.end('converter broke')
      return
    }
    const review = JSON.parse(Buffer.concat(chunks).toString()) as {
      request: { uid: string; desiredAPIVersion: string; objects: KubeObject[] }
    }
    const { uid, desiredAPIVersion, objects } = review.request
    const convertedObjects = objects.map((o) => {
      const spec = o['spec'] as Record<string, unknown>
      const toV2 = desiredAPIVersion.endsWith('/v2')
      return { ...o, apiVersion: desiredAPIVersion, spec: toV2 ? { schedule: spec['cronSpec'] } : { cronSpec: spec['schedule'] } }
    })
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response: { uid, result: { status: 'Success' }, convertedObjects } }))
  })
}

async function listen(server: HttpsServer | ReturnType<typeof createHttpServer>): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return (server.address() as AddressInfo).port
}

function crd(clientConfig: object): CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'crontabs.stable.example.com' },
    spec: {
      group: 'stable.example.com',
      names: { plural: 'crontabs', kind: 'CronTab' },
      scope: 'Namespaced',
      versions: [
        { name: 'v1', served: true, storage: false },
        { name: 'v2', served: true, storage: true },
      ],
      conversion: { strategy: 'Webhook', webhook: { clientConfig, conversionReviewVersions: ['v1'] } },
    },
  }
}

const crontab: KubeObject = {
  apiVersion: 'stable.example.com/v1',
  kind: 'CronTab',
  metadata: { name: 'nightly', namespace: 'jobs', uid: 'u-1' },
  spec: { cronSpec: '0 0 * * *' },
}

const review = (uid: string) => ({ kind: 'ConversionReview', apiVersion: 'apiextensions.k8s.io/v1', request: { uid, desiredAPIVersion: 'stable.example.com/v2', objects: [crontab] } })

describe('Node webhook client over HTTPS', () => {
  let caBundle: string
  let otherCABundle: string
  let byIP: HttpsServer
  let byServiceName: HttpsServer
  let ipURL: string
  let serviceURL: string
  let client: NodeWebhookClient

  before(async () => {
    const ca = await createCertificateAuthority({ commonName: 'webhook-test-ca' })
    const other = await createCertificateAuthority({ commonName: 'someone-else' })
    caBundle = base64(ca.certificate)
    otherCABundle = base64(other.certificate)
    const ipCert = await issueServingCertificate(ca, { commonName: 'webhook', dnsNames: [], ipAddresses: ['127.0.0.1'] })
    // Only the in-cluster name: reachable by IP, but trusted only when the client checks that name.
    const svcCert = await issueServingCertificate(ca, { commonName: 'converter', dnsNames: ['converter.hooks.svc'], ipAddresses: [] })
    byIP = createHttpsServer({ cert: ipCert.certificate, key: ipCert.privateKey }, handle)
    byServiceName = createHttpsServer({ cert: svcCert.certificate, key: svcCert.privateKey }, handle)
    ipURL = `https://127.0.0.1:${await listen(byIP)}`
    serviceURL = `https://127.0.0.1:${await listen(byServiceName)}`
    client = nodeWebhookClient()
  })

  after(async () => {
    client.close()
    for (const server of [byIP, byServiceName]) {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('posts a ConversionReview as JSON and answers the decoded reply, trusting the caBundle', async () => {
    const reply = (await client.post({ url: `${ipURL}/convert`, caBundle }, review('r-1'), 5000)) as {
      response: { uid: string; convertedObjects: KubeObject[] }
    }
    assert.equal(reply.response.uid, 'r-1')
    assert.deepEqual(reply.response.convertedObjects[0]!['spec'], { schedule: '0 0 * * *' })
  })

  it('refuses a server whose certificate another CA signed', async () => {
    await assert.rejects(client.post({ url: `${ipURL}/convert`, caBundle: otherCABundle }, review('r-2'), 5000), (err: Error) => {
      assert.match(err.message, /^Post "https:\/\/127\.0\.0\.1:\d+\/convert": tls: failed to verify certificate: x509: certificate signed by unknown authority/)
      return true
    })
  })

  it('trusts only the platform CAs when no caBundle is given, so the test CA is refused', async () => {
    await assert.rejects(client.post({ url: `${ipURL}/convert` }, review('r-3'), 5000), /certificate signed by unknown authority/)
  })

  it('checks the certificate against the service name it is given, not the address it dials', async () => {
    await assert.rejects(client.post({ url: `${serviceURL}/convert`, caBundle }, review('r-4'), 5000), /tls: failed to verify certificate: .*altnames/)
    const reply = (await client.post({ url: `${serviceURL}/convert`, caBundle, serverName: 'converter.hooks.svc' }, review('r-5'), 5000)) as {
      response: { uid: string }
    }
    assert.equal(reply.response.uid, 'r-5')
  })

  it('words a failed answer with its status code and body', async () => {
    await assert.rejects(
      client.post({ url: `${ipURL}/fail`, caBundle }, review('r-6'), 5000),
      /^Error: Post "https:\/\/127\.0\.0\.1:\d+\/fail": the server responded with status code 500: converter broke$/,
    )
  })

  it('gives up at its deadline', async () => {
    const started = Date.now()
    await assert.rejects(client.post({ url: `${ipURL}/slow`, caBundle }, review('r-7'), 150), /context deadline exceeded/)
    assert.ok(Date.now() - started < 3000)
  })

  it('says when nothing listens', async () => {
    const closed = createHttpServer()
    const port = await listen(closed)
    await new Promise((resolve) => closed.close(resolve))
    await assert.rejects(client.post({ url: `https://127.0.0.1:${port}/convert`, caBundle }, review('r-8'), 5000), /connect: connection refused/)
  })

  it('carries a custom resource conversion both ways, through a service reference', async () => {
    const resolveService = async () => serviceURL
    const deps = { client, resolveService }
    const config = { service: { namespace: 'hooks', name: 'converter', path: '/convert', port: 443 }, caBundle }
    const v1 = customResourceConversion(crd(config), 'v1', deps)
    const stored = await v1.toStorage(crontab)
    assert.equal(stored.apiVersion, 'stable.example.com/v2')
    assert.deepEqual(stored['spec'], { schedule: '0 0 * * *' })
    assert.deepEqual(await v1.fromStorage(stored), crontab)
  })

  it('turns an untrusted webhook into a 500 Internal error naming the conversion', async () => {
    const v1 = customResourceConversion(crd({ url: `${ipURL}/convert`, caBundle: otherCABundle }), 'v1', { client })
    await assert.rejects(async () => v1.toStorage(crontab), (err: unknown) => {
      assert.ok(err instanceof StatusError)
      assert.equal(err.code, 500)
      assert.match(err.message, /^Internal error occurred: conversion webhook for stable\.example\.com\/v1, Kind=CronTab failed: Post ".*": tls: failed to verify certificate/)
      return true
    })
  })
})

describe('fetch webhook client', () => {
  let server: ReturnType<typeof createHttpServer>
  let url: string

  before(async () => {
    server = createHttpServer(handle)
    url = `http://127.0.0.1:${await listen(server)}`
  })

  after(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })

  it('carries a review over plain HTTP', async () => {
    const reply = (await fetchWebhookClient().post({ url: `${url}/convert` }, review('f-1'), 5000)) as { response: { uid: string } }
    assert.equal(reply.response.uid, 'f-1')
  })

  it('words a failed answer and a deadline as the Node client does', async () => {
    await assert.rejects(fetchWebhookClient().post({ url: `${url}/fail` }, review('f-2'), 5000), /the server responded with status code 500: converter broke/)
    await assert.rejects(fetchWebhookClient().post({ url: `${url}/slow` }, review('f-3'), 150), /context deadline exceeded/)
  })

  it('refuses an https URL with a caBundle it cannot trust', async () => {
    await assert.rejects(
      fetchWebhookClient().post({ url: 'https://127.0.0.1:1/convert', caBundle: 'Q0E=' }, review('f-4'), 5000),
      /cannot trust a caBundle/,
    )
  })
})
