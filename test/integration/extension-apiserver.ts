/**
 * A small extension API server for the aggregation tests, on loopback over
 * HTTPS: it serves `wardle.example.com/v1alpha1` flunders (discovery, list,
 * get, create, watch) and believes the X-Remote-* identity only from a
 * client certificate the request-header CA signed with an allowed name, as
 * a real one configured from `extension-apiserver-authentication` does.
 * Every request it received is recorded with the identity it saw. It
 * publishes its OpenAPI documents (`/openapi/v2`, the `/openapi/v3` index and
 * its group/version's v3 document) with ETags, answering 304 to a matching
 * If-None-Match, as kube-openapi's handlers do.
 */
import { createHash } from 'node:crypto'
import { createServer, type Server } from 'node:https'
import type { AddressInfo } from 'node:net'
import type { TLSSocket } from 'node:tls'
import assert from 'node:assert/strict'
import { createCertificateAuthority, issueServingCertificate } from '../../core/pki/certificates.js'
import type { TestClient } from './harness.js'

export const WARDLE = 'wardle.example.com'
export const WARDLE_GV = `${WARDLE}/v1alpha1`

export interface SeenRequest {
  method: string
  path: string
  /** The identity believed from the headers, undefined when the certificate was not the proxy's. */
  user?: string
  groups: string[]
  extra: Record<string, string[]>
  /** Headers as received, lower case, repeated lines kept apart. */
  raw: [string, string][]
  clientCommonName?: string
}

export interface ExtensionServer {
  port: number
  caBundle: string
  seen: SeenRequest[]
  flunders: Map<string, Record<string, unknown>>
  /** Paths answered with a redirect. */
  redirects: Set<string>
  /** Paths whose answers carry CORS headers granting any origin. */
  cors: Set<string>
  /** Paths never answered: the request is held open until the caller gives it up. */
  stalls: Set<string>
  /** Paths answered with a status and then a body that never ends (a byte every 100 ms). */
  drips: Set<string>
  /** Requests to a stalled or dripping path the caller has not yet given up. */
  held: number
  /** What the OpenAPI endpoints answer (text: served as it is); absent: 404. Changed by tests at will. */
  openapi: { v2?: Record<string, unknown> | string; v3?: Record<string, unknown>; /** The hash its v3 index gives, instead of the document's. */ v3Hash?: string }
  close(): Promise<void>
}

const FLUNDER = 'com.example.wardle.v1alpha1.Flunder'
const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'
const flunderGvk = [{ group: WARDLE, version: 'v1alpha1', kind: 'Flunder' }]

/** The Flunder's schema; its metadata is the extension's own, smaller ObjectMeta (a name that collides with the server's). */
function flunderSchema(ref: string): Record<string, unknown> {
  return {
    description: 'A Flunder is an example type of the wardle extension server.',
    type: 'object',
    properties: {
      apiVersion: { description: 'APIVersion of the object.', type: 'string' },
      kind: { description: 'Kind of the object.', type: 'string' },
      metadata: { description: 'Standard object metadata.', $ref: `${ref}${OBJECT_META}` },
      spec: {
        description: 'What the flunder should look like.',
        type: 'object',
        properties: { reference: { description: 'The name of another flunder this one points at.', type: 'string' } },
      },
    },
    'x-kubernetes-group-version-kind': flunderGvk,
  }
}
const extensionObjectMeta = { description: 'The wardle server\'s own ObjectMeta.', type: 'object', properties: { name: { type: 'string' } } }

/** The extension's /openapi/v2: its flunder paths, a path outside /apis/, and a path of the server's own apps group. */
export function wardleOpenApiV2(): Record<string, unknown> {
  const get = (operationId: string, ref: string) => ({
    get: { operationId, 'x-kubernetes-group-version-kind': flunderGvk[0]!, produces: ['application/json'], responses: { '200': { description: 'OK', schema: { $ref: `#/definitions/${ref}` } } } },
  })
  return {
    swagger: '2.0',
    info: { title: 'wardle', version: 'v0.1' },
    paths: {
      [`/apis/${WARDLE_GV}/namespaces/{namespace}/flunders/{name}`]: get('readWardleV1alpha1NamespacedFlunder', FLUNDER),
      '/wardle-healthz': get('wardleHealth', FLUNDER),
      '/apis/apps/v1/namespaces/{namespace}/deployments': get('wardleStealsDeployments', FLUNDER),
    },
    definitions: {
      [FLUNDER]: flunderSchema('#/definitions/'),
      [OBJECT_META]: extensionObjectMeta,
      'com.example.wardle.v1alpha1.Unused': { type: 'object' },
    },
  }
}

/** The extension's v3 document of wardle.example.com/v1alpha1. */
export function wardleOpenApiV3(): Record<string, unknown> {
  return {
    openapi: '3.0.0',
    info: { title: 'wardle', version: 'v0.1' },
    paths: {
      [`/apis/${WARDLE_GV}/namespaces/{namespace}/flunders/{name}`]: {
        get: {
          operationId: 'readWardleV1alpha1NamespacedFlunder',
          // kubectl explain finds a resource's kind here.
          'x-kubernetes-group-version-kind': flunderGvk[0]!,
          responses: { '200': { description: 'OK', content: { 'application/json': { schema: { $ref: `#/components/schemas/${FLUNDER}` } } } } },
        },
      },
    },
    components: { schemas: { [FLUNDER]: flunderSchema('#/components/schemas/'), [OBJECT_META]: extensionObjectMeta } },
  }
}

const etagOf = (text: string) => `"${createHash('sha512').update(text).digest('hex').slice(0, 32).toUpperCase()}"`

const resourceList = {
  kind: 'APIResourceList',
  apiVersion: 'v1',
  groupVersion: WARDLE_GV,
  resources: [
    { name: 'flunders', singularName: 'flunder', namespaced: true, kind: 'Flunder', verbs: ['create', 'delete', 'get', 'list', 'watch'], shortNames: ['fl'] },
    { name: 'flunders/status', singularName: '', namespaced: true, kind: 'Flunder', verbs: ['get'] },
  ],
}

export async function startExtensionServer(requestHeaderCA: string, allowedNames: string[] = []): Promise<ExtensionServer> {
  const ca = await createCertificateAuthority({ commonName: 'wardle-serving-ca' })
  const serving = await issueServingCertificate(ca, { commonName: 'api', dnsNames: ['api.wardle.svc', 'localhost'], ipAddresses: ['127.0.0.1'] })
  const ext: ExtensionServer = {
    port: 0,
    caBundle: Buffer.from(ca.certificate).toString('base64'),
    seen: [],
    flunders: new Map(),
    redirects: new Set(),
    cors: new Set(),
    stalls: new Set(),
    drips: new Set(),
    held: 0,
    openapi: { v2: wardleOpenApiV2(), v3: wardleOpenApiV3() },
    close: async () => {},
  }
  const watchers = new Set<(line: string) => void>()
  const server: Server = createServer({ cert: serving.certificate, key: serving.privateKey, ca: requestHeaderCA, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const socket = req.socket as TLSSocket
    const peer = socket.getPeerCertificate()
    const cn = peer && 'subject' in peer && peer.subject ? String(peer.subject.CN) : undefined
    const trusted = socket.authorized && cn !== undefined && (allowedNames.length === 0 || allowedNames.includes(cn))
    const raw: [string, string][] = []
    for (let i = 0; i < req.rawHeaders.length; i += 2) raw.push([req.rawHeaders[i]!.toLowerCase(), req.rawHeaders[i + 1]!])
    const lines = (name: string) => raw.filter(([n]) => n === name).map(([, v]) => v)
    const extra: Record<string, string[]> = {}
    for (const [n, v] of raw) if (n.startsWith('x-remote-extra-')) (extra[decodeURIComponent(n.slice('x-remote-extra-'.length))] ??= []).push(v)
    const url = new URL(req.url ?? '/', 'https://wardle')
    const seen: SeenRequest = {
      method: req.method ?? '',
      path: url.pathname + url.search,
      ...(trusted && lines('x-remote-user')[0] ? { user: lines('x-remote-user')[0] } : {}),
      groups: trusted ? lines('x-remote-group') : [],
      extra: trusted ? extra : {},
      raw,
      ...(cn ? { clientCommonName: cn } : {}),
    }
    ext.seen.push(seen)
    const json = (status: number, body: unknown) => {
      if (ext.cors.has(url.pathname)) res.setHeader('access-control-allow-origin', 'https://evil.example').setHeader('access-control-allow-credentials', 'true')
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(body))
    }
    if (!seen.user) return json(401, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Unauthorized', code: 401, message: 'Unauthorized' })
    if (ext.redirects.has(url.pathname)) {
      res.writeHead(302, { location: 'https://elsewhere.example/steal' })
      return res.end()
    }
    if (ext.stalls.has(url.pathname) || ext.drips.has(url.pathname)) {
      ext.held++
      const drip = ext.drips.has(url.pathname) ? setInterval(() => res.write(' '), 100) : undefined
      if (drip) {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.write('{')
      }
      res.on('close', () => {
        clearInterval(drip)
        ext.held--
      })
      return
    }
    if (url.pathname === '/openapi/v2' || url.pathname.startsWith('/openapi/v3')) {
      const v3Text = ext.openapi.v3 ? JSON.stringify(ext.openapi.v3) : undefined
      const v3Key = `apis/${WARDLE_GV}`
      const v2 = ext.openapi.v2
      const text =
        url.pathname === '/openapi/v2'
          ? typeof v2 === 'string' ? v2 : v2 && JSON.stringify(v2)
          : url.pathname === '/openapi/v3'
            ? v3Text && JSON.stringify({ paths: { [v3Key]: { serverRelativeURL: `/openapi/v3/${v3Key}?hash=${encodeURIComponent(ext.openapi.v3Hash ?? etagOf(v3Text).slice(1, 17))}` } } })
            : url.pathname === `/openapi/v3/${v3Key}` ? v3Text : undefined
      if (text === undefined) return json(404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: 'not found' })
      const etag = etagOf(text)
      if (req.headers['if-none-match'] === etag) {
        res.writeHead(304, { etag })
        return res.end()
      }
      res.writeHead(200, { 'content-type': 'application/json', etag })
      return res.end(text)
    }
    const base = `/apis/${WARDLE_GV}`
    if (url.pathname === base) return json(200, resourceList)
    const m = /^\/apis\/wardle\.example\.com\/v1alpha1\/(?:namespaces\/([^/]+)\/)?flunders(?:\/([^/]+))?$/.exec(url.pathname)
    if (!m) return json(404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: 'not found' })
    const [, namespace, name] = m
    if (req.method === 'POST') {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const obj = JSON.parse(Buffer.concat(chunks).toString()) as { metadata: Record<string, unknown> }
        const stored = { ...obj, metadata: { ...obj.metadata, namespace, resourceVersion: String(ext.flunders.size + 1), creationTimestamp: new Date().toISOString() } }
        ext.flunders.set(`${namespace}/${String(obj.metadata['name'])}`, stored)
        for (const w of watchers) w(JSON.stringify({ type: 'ADDED', object: stored }))
        json(201, stored)
      })
      return
    }
    if (name) {
      const obj = ext.flunders.get(`${namespace}/${name}`)
      return obj ? json(200, obj) : json(404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: `flunders.${WARDLE} "${name}" not found` })
    }
    const items = [...ext.flunders.values()].filter((f) => !namespace || (f['metadata'] as { namespace?: string }).namespace === namespace)
    if (url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1') {
      res.writeHead(200, { 'content-type': 'application/json' })
      for (const item of items) res.write(`${JSON.stringify({ type: 'ADDED', object: item })}\n`)
      const send = (line: string) => res.write(`${line}\n`)
      watchers.add(send)
      res.on('close', () => watchers.delete(send))
      return
    }
    json(200, { kind: 'FlunderList', apiVersion: WARDLE_GV, metadata: { resourceVersion: String(ext.flunders.size) }, items })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  ext.port = (server.address() as AddressInfo).port
  ext.close = async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
  return ext
}

/** The aggregating server's request-header settings: trust the front-proxy client certificate `clientCA` signs. */
export function frontProxyRequestHeader(clientCA: string) {
  return {
    usernameHeaders: ['X-Remote-User'],
    groupHeaders: ['X-Remote-Group'],
    uidHeaders: ['X-Remote-Uid'],
    extraHeaderPrefixes: ['X-Remote-Extra-'],
    allowedNames: ['front-proxy-client'],
    clientCA,
  }
}

/** Creates the `wardle` namespace and the Service `wardle/api`, its Endpoints at the extension server's loopback port. */
export async function exposeExtensionServer(api: TestClient, ext: ExtensionServer): Promise<void> {
  const created = async (path: string, body: unknown): Promise<void> => {
    const r = await api.post(path, body)
    assert.equal(r.status, 201, r.text)
  }
  await created('/api/v1/namespaces', { metadata: { name: 'wardle' } })
  await created('/api/v1/namespaces/wardle/services', { metadata: { name: 'api' }, spec: { ports: [{ name: 'https', port: 443 }] } })
  await created('/api/v1/namespaces/wardle/endpoints', {
    metadata: { name: 'api' },
    subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: ext.port }] }],
  })
}
