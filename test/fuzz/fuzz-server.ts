/**
 * The server the fuzz suite drives: in process, with a custom resource that
 * keeps any JSON (`things`) and one with a typed schema (`widgets`), and a
 * few seed objects; plus the checks every answer and the stored state must pass.
 */
import assert from 'node:assert/strict'
import { parse as parseYaml } from 'yaml'
import { ADMIN_IDENTITY, type ApiServer, createApiServer, type ServerPorts } from '../../core/index.js'
import { decodeProtobuf } from '../../core/encoding/protobuf.js'
import { CEL_ATTACKS, celAttackConfigurations, celAttackDefinition } from './cel-attacks.js'
import { CONFIGMAPS, type FuzzRequest, THINGS } from './worst-inputs.js'

export const WIDGETS = '/apis/fuzz.example.com/v1/namespaces/default/widgets'
export const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions'

/** How long one request may take before the suite calls it a hang. */
export const REQUEST_TIMEOUT_MS = 15_000

export interface Answer {
  status: number
  contentType: string
  text: string
  /** The body as sent: a protobuf Status is read from these. */
  bytes: Uint8Array
}

/** Sends one request and reads the whole answer, failing when it takes longer than REQUEST_TIMEOUT_MS. */
export async function send(server: ApiServer, req: FuzzRequest): Promise<Answer> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms: ${req.method} ${req.path.slice(0, 200)}`)), REQUEST_TIMEOUT_MS)
  })
  try {
    const answer = (async () => {
      const init: RequestInit = { method: req.method, headers: req.headers }
      if (req.body !== undefined && req.method !== 'GET' && req.method !== 'HEAD') init.body = req.body as NonNullable<RequestInit['body']>
      const res = await server.fetch(new Request(`http://in-process${req.path}`, init))
      const bytes = new Uint8Array(await res.arrayBuffer())
      return { status: res.status, contentType: res.headers.get('content-type') ?? '', text: new TextDecoder().decode(bytes), bytes }
    })()
    return await Promise.race([answer, hang])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * The 5xx answers upstream itself gives to a client's input, kept on
 * purpose: an apply configuration a custom resource's schema cannot type
 * (the field manager's plain error, a 500 without a reason), and a
 * resourceVersion the store has not reached (504 Timeout after waiting).
 */
const UPSTREAM_5XX: ReadonlyArray<{ code: number; message: RegExp }> = [
  { code: 500, message: /^failed to create typed patch object / },
  { code: 504, message: /^Timeout: Too large resource version/ },
]

/** Every answer is a success or a 4xx; a 4xx is a Status saying so. Never a 5xx but upstream's own (UPSTREAM_5XX). */
export function assertWellFormed(req: FuzzRequest, answer: Answer): void {
  const what = `${req.method} ${req.path.slice(0, 300)} (${req.headers['content-type'] ?? 'no content-type'}) answered ${answer.status}: ${answer.text.slice(0, 500)}`
  if (answer.status < 400) return
  // The OpenAPI handlers answer an unknown group/version or media type with a bare code, as upstream's kube-openapi does.
  if (/^\/openapi\//.test(req.path) && (answer.status === 404 || answer.status === 406) && answer.text === '') return
  let status: { kind?: unknown; code?: unknown; status?: unknown; message?: unknown }
  try {
    // In the encoding the request negotiated, as upstream writes an error's Status.
    status = statusOf(answer) as typeof status
  } catch {
    assert.fail(`not a Status: ${what}`)
  }
  const message = typeof status.message === 'string' ? status.message : ''
  // A strategic merge that fails but for a malformed directive is a plain error upstream passes on: 500, no reason.
  const strategicFailure = req.headers['content-type'] === 'application/strategic-merge-patch+json' && answer.status === 500 && !('reason' in status)
  assert.ok(answer.status < 500 || strategicFailure || UPSTREAM_5XX.some((known) => known.code === answer.status && known.message.test(message)), what)
  assert.equal(status.kind, 'Status', what)
  assert.equal(status.status, 'Failure', what)
  assert.equal(status.code, answer.status, what)
}

function statusOf(answer: Answer): unknown {
  if (answer.contentType === 'application/yaml') return parseYaml(answer.text)
  if (answer.contentType === 'application/vnd.kubernetes.protobuf') return decodeProtobuf(answer.bytes)
  return JSON.parse(answer.text)
}

async function call(server: ApiServer, method: string, path: string, body?: unknown): Promise<Answer> {
  const req: FuzzRequest = { method, path, headers: { 'content-type': 'application/json' } }
  if (body !== undefined) req.body = JSON.stringify(body)
  return send(server, req)
}

function definition(plural: string, kind: string, spec: Record<string, unknown>) {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.fuzz.example.com` },
    spec: {
      group: 'fuzz.example.com',
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', properties: { spec } } },
          subresources: { status: {} },
          additionalPrinterColumns: [{ name: 'Size', type: 'string', jsonPath: '.spec.size' }],
        },
      ],
    },
  }
}

const widgetSpec = {
  type: 'object',
  properties: {
    size: { type: 'string', enum: ['S', 'M', 'L'] },
    count: { type: 'integer', minimum: 0, maximum: 100 },
    tags: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 20 }, 'x-kubernetes-list-type': 'set' },
    owner: { type: 'object', properties: { name: { type: 'string' } }, 'x-kubernetes-map-type': 'atomic' },
  },
  'x-kubernetes-validations': [{ rule: '!has(self.count) || self.count < 50 || self.size == "L"', message: 'big counts need size L' }],
}

/**
 * What the fuzz suite's server holds before the first request: its CRDs
 * (one of them running the CEL attacks), then the seeds (`seed-0`..`seed-2`
 * of each kind) and the policy and webhook that run the CEL attacks on
 * ConfigMaps of their own names.
 */
export function fuzzResources(): { crds: object[]; seeds: Array<{ collection: string; body: object }> } {
  const crds = [
    definition('things', 'Thing', { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }),
    definition('widgets', 'Widget', widgetSpec),
    celAttackDefinition(),
  ]
  const seeds: Array<{ collection: string; body: object }> = [...celAttackConfigurations()]
  for (let i = 0; i < 3; i++) {
    const name = `seed-${i}`
    seeds.push(
      { collection: CONFIGMAPS, body: { metadata: { name, labels: { app: 'fuzz', i: String(i) } }, data: { a: 'b' } } },
      { collection: THINGS, body: { apiVersion: 'fuzz.example.com/v1', kind: 'Thing', metadata: { name }, spec: { a: { b: [1, 2] } } } },
      { collection: WIDGETS, body: { apiVersion: 'fuzz.example.com/v1', kind: 'Widget', metadata: { name }, spec: { size: 'S', count: i } } },
    )
  }
  return { crds, seeds }
}

/** A started server with the fuzz suite's resources and seeds. */
export async function fuzzServer(ports: Partial<ServerPorts> = {}): Promise<ApiServer> {
  const server = createApiServer({ bookmarkIntervalMs: 50, requestTimeoutMs: REQUEST_TIMEOUT_MS, embeddedIdentity: ADMIN_IDENTITY }, ports)
  await server.ready
  const { crds, seeds } = fuzzResources()
  for (const crd of crds) {
    const res = await call(server, 'POST', CRDS, crd)
    assert.equal(res.status, 201, res.text.slice(0, 500))
  }
  const deadline = Date.now() + 10_000
  const served = async (path: string) => (await call(server, 'GET', path)).status === 200
  while (!(await served(THINGS)) || !(await served(WIDGETS)) || !(await served(CEL_ATTACKS))) {
    assert.ok(Date.now() < deadline, 'the fuzz resources were never served')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  for (const { collection, body } of seeds) {
    const res = await call(server, 'POST', collection, body)
    assert.equal(res.status, 201, res.text.slice(0, 500))
  }
  return server
}

/** The stored objects are consistent: each list parses, and each item reads back at the resourceVersion the list gave. */
export async function assertConsistent(server: ApiServer): Promise<void> {
  for (const collection of [CONFIGMAPS, THINGS, WIDGETS]) {
    const list = await call(server, 'GET', collection)
    assert.equal(list.status, 200, list.text.slice(0, 300))
    const items = (JSON.parse(list.text) as { items: Array<{ metadata: { name: string; resourceVersion: string } }> }).items
    for (const item of items) {
      const one = await call(server, 'GET', `${collection}/${encodeURIComponent(item.metadata.name)}`)
      assert.equal(one.status, 200, `${collection}/${item.metadata.name}: ${one.text.slice(0, 300)}`)
      assert.equal((JSON.parse(one.text) as { metadata: { resourceVersion: string } }).metadata.resourceVersion, item.metadata.resourceVersion)
    }
  }
}
