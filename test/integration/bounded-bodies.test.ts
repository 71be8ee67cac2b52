/**
 * One request's work stays proportional to its body: each bound is shown
 * with a request just under it (served) and one just over it (refused with
 * upstream's Status, nothing stored).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { encodeProtobuf } from '../../core/encoding/protobuf.js'
import { CRDS } from './crd-fixtures.js'
import { eventually, startServer, type Reply, type TestClient } from './harness.js'

const CM = '/api/v1/namespaces/default/configmaps'
const LIMIT = 3 * 1024 * 1024
const THINGS = '/apis/bounds.example.com/v1/namespaces/default/things'
const JSON_PATCH = 'application/json-patch+json'
const YAML = { 'content-type': 'application/yaml' }

/** Every configmap and thing, to show that a refused request stored nothing. */
async function stored(api: TestClient): Promise<unknown> {
  const [cms, things] = await Promise.all([api.get(CM), api.get(THINGS)])
  return { cms: cms.body.items, things: things.body?.items }
}

async function refused(api: TestClient, request: () => Promise<Reply>, code: number, reason: string, message: string | RegExp): Promise<void> {
  const before = await stored(api)
  const r = await request()
  assert.equal(r.status, code, r.text.slice(0, 500))
  assert.equal(r.body.kind, 'Status')
  assert.equal(r.body.reason, reason)
  if (typeof message === 'string') assert.equal(r.body.message, message)
  else assert.match(r.body.message, message)
  assert.deepEqual(await stored(api), before, 'the store changed')
}

/** A server with a custom resource whose spec keeps any JSON, so that nesting reaches storage. */
async function serverWithThings(): Promise<TestClient> {
  const api = await startServer()
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'things.bounds.example.com' },
    spec: {
      group: 'bounds.example.com',
      scope: 'Namespaced',
      names: { plural: 'things', singular: 'thing', kind: 'Thing' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } },
        },
      ],
    },
  }
  assert.equal((await api.post(CRDS, crd)).status, 201)
  await eventually('things are served', async () => (await api.get(THINGS)).status === 200)
  return api
}

/** A Thing whose body nests `depth` levels in all: the object, `spec`, then arrays. */
function nestedThing(name: string, depth: number): string {
  const arrays = depth - 2
  return `{"apiVersion":"bounds.example.com/v1","kind":"Thing","metadata":{"name":"${name}"},"spec":{"x":${'['.repeat(arrays)}${']'.repeat(arrays)}}}`
}

/** The same nesting in YAML's block style. */
function nestedYamlThing(name: string, depth: number): string {
  let text = `apiVersion: bounds.example.com/v1\nkind: Thing\nmetadata:\n  name: ${name}\nspec:\n`
  for (let level = 2; level < depth; level++) text += `${' '.repeat(level - 1)}k:\n`
  return `${text}${' '.repeat(depth - 1)}k: leaf\n`
}

/** A body of `total` bytes, `chunk` after `chunk`, made only as the server reads it; `sent()` says how much it took. */
function offered(chunk: Uint8Array, total: number): { body: ReadableStream<Uint8Array>; sent: () => number } {
  let sent = 0
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= total) return controller.close()
      sent += chunk.byteLength
      controller.enqueue(chunk)
    },
  })
  return { body, sent: () => sent }
}

describe('request bodies', () => {
  it('reads a body of 3 MiB and refuses one byte more with 413', async () => {
    const api = await startServer()
    // JSON allows any amount of whitespace: the object stays small, the body is exactly at the limit.
    const object = JSON.stringify({ metadata: { name: 'big' }, data: { a: 'b' } })
    const fits = object + ' '.repeat(LIMIT - object.length)
    await refused(api, () => api.post(CM, `${fits} `), 413, 'RequestEntityTooLarge', 'Request entity too large: limit is 3145728')
    const r = await api.post(CM, fits)
    assert.equal(r.status, 201, r.text.slice(0, 300))
    assert.deepEqual((await api.get(`${CM}/big`)).body.data, { a: 'b' })
  })

  it('stops reading a chunked body at the limit instead of buffering all of it', async () => {
    const api = await startServer()
    const chunk = new Uint8Array(64 * 1024).fill(0x20)
    // 100 MiB on offer, without Content-Length: the server must give up after about 3 MiB.
    const { body, sent } = offered(chunk, 100 * 1024 * 1024)
    const res = await api.server.fetch(
      new Request(`http://in-process${CM}`, { method: 'POST', body, headers: { 'content-type': 'application/json' }, duplex: 'half' } as RequestInit),
    )
    const status = (await res.json()) as { message: string }
    assert.equal(res.status, 413)
    assert.equal(status.message, 'Request entity too large: limit is 3145728')
    assert.ok(sent() <= LIMIT + 4 * chunk.byteLength, `read ${sent()} bytes of a body refused at ${LIMIT}`)
    assert.deepEqual((await api.get(CM)).body.items, [])
  })

  it('refuses a declared Content-Length over the limit before reading the body', async () => {
    const api = await startServer()
    let pulled = false
    // No high-water mark: the stream is pulled only when someone reads it.
    const body = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          pulled = true
          controller.enqueue(new TextEncoder().encode('{}'))
          controller.close()
        },
      },
      { highWaterMark: 0 },
    )
    const headers = { 'content-type': 'application/json', 'content-length': String(LIMIT + 1) }
    const res = await api.server.fetch(new Request(`http://in-process${CM}`, { method: 'POST', body, headers, duplex: 'half' } as RequestInit))
    assert.equal(res.status, 413)
    assert.equal(((await res.json()) as { reason: string }).reason, 'RequestEntityTooLarge')
    assert.equal(pulled, false)
  })

  it('refuses a JSON body or patch that starts with a byte order mark, as Go decodes it, and reads YAML past one', async () => {
    const api = await startServer()
    const mark = '\ufeff'
    const invalidStart = "invalid character 'ï' looking for beginning of value"
    const object = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'marked' } })
    await refused(api, () => api.post(CM, mark + object), 400, 'BadRequest', `couldn't get version/kind; json parse error: ${invalidStart}`)
    // One long enough for the decoder that parses in slices.
    const long = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'marked' }, data: { a: 'x'.repeat(200_000) } })
    await refused(api, () => api.post(CM, mark + long), 400, 'BadRequest', `couldn't get version/kind; json parse error: ${invalidStart}`)
    assert.equal((await api.post(CM, `${mark}apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: marked\n`, { headers: YAML })).status, 201)
    await refused(api, () => api.patch(`${CM}/marked`, `${mark}{"data":{"a":"b"}}`, 'application/merge-patch+json'), 400, 'BadRequest', `error decoding patch: ${invalidStart}`)
  })
})

describe('numbers JSON cannot carry', () => {
  it('refuses YAML whose value is infinite or not a number with 400 in Go\'s words, and stores nothing', async () => {
    const api = await serverWithThings()
    const thing = (value: string) => `apiVersion: bounds.example.com/v1\nkind: Thing\nmetadata:\n  name: t\nspec:\n  v: ${value}\n`
    const cases: Array<[string, string]> = [
      ['.inf', '+Inf'],
      ['-.Inf', '-Inf'],
      ['.nan', 'NaN'],
      ['1e400', '+Inf'],
      [`{a: [1, -${'9'.repeat(400)}]}`, '-Inf'],
    ]
    for (const [value, named] of cases) {
      const message = `error converting YAML to JSON: json: unsupported value: ${named}`
      await refused(api, () => api.post(THINGS, thing(value), { headers: YAML }), 400, 'BadRequest', message)
      // An apply's configuration fails upstream's YAML decoding, which says so first.
      await refused(api, () => api.patch(`${THINGS}/t?fieldManager=m`, thing(value), 'application/apply-patch+yaml'), 400, 'BadRequest', `error decoding YAML: ${message}`)
    }
    // Finite numbers, and words that only look like them, are kept.
    assert.equal((await api.post(THINGS, thing('{a: 1.5e300, b: .info, c: 1e30}'), { headers: YAML })).status, 201)
    assert.deepEqual((await api.get(`${THINGS}/t`)).body.spec, { v: { a: 1.5e300, b: '.info', c: 1e30 } })
  })
})

describe('nesting depth', () => {
  it('stores JSON nested 500 levels and refuses 501 with the decoder message', async () => {
    const api = await serverWithThings()
    const r = await api.post(THINGS, nestedThing('deep', 500))
    assert.equal(r.status, 201, r.text.slice(0, 300))
    assert.equal((await api.get(`${THINGS}/deep`, { headers: { accept: 'application/yaml' } })).status, 200)
    await refused(
      api,
      () => api.post(THINGS, nestedThing('deeper', 501)),
      400,
      'BadRequest',
      "couldn't get version/kind; json parse error: invalid character '[' exceeded max depth",
    )
  })

  it('refuses a JSON body nested past the limit from its first chunks, without reading the rest', async () => {
    const api = await startServer()
    for (const [path, method, type, message] of [
      [CM, 'POST', 'application/json', "couldn't get version/kind; json parse error: invalid character '[' exceeded max depth"],
      [`${CM}/absent`, 'PATCH', 'application/merge-patch+json', "error decoding patch: invalid character '[' exceeded max depth"],
    ] as const) {
      const chunk = new TextEncoder().encode('['.repeat(64 * 1024))
      // 2 MiB of brackets on offer, declared: nobody needs more than the first chunk to know.
      const { body, sent } = offered(chunk, 2 * 1024 * 1024)
      const headers = { 'content-type': type, 'content-length': String(2 * 1024 * 1024) }
      const res = await api.server.fetch(new Request(`http://in-process${path}`, { method, body, headers, duplex: 'half' } as RequestInit))
      assert.equal(res.status, 400)
      assert.equal(((await res.json()) as { message: string }).message, message)
      assert.ok(sent() <= 4 * chunk.byteLength, `read ${sent()} bytes of a body refused from its first ${chunk.byteLength}`)
    }
    assert.deepEqual((await api.get(CM)).body.items, [])
  })

  it('refuses JSON nested a million levels at once', async () => {
    const api = await serverWithThings()
    await refused(api, () => api.post(THINGS, nestedThing('huge', 1_000_000)), 400, 'BadRequest', /exceeded max depth/)
  })

  it('stores YAML nested 500 levels and refuses 501, in block and flow style', async () => {
    const api = await serverWithThings()
    const r = await api.call('POST', THINGS, { body: nestedYamlThing('deep', 500), headers: YAML })
    assert.equal(r.status, 201, r.text.slice(0, 300))
    const message = 'error converting YAML to JSON: yaml: exceeded max depth of 500'
    await refused(api, () => api.call('POST', THINGS, { body: nestedYamlThing('block', 501), headers: YAML }), 400, 'BadRequest', message)
    await refused(api, () => api.call('POST', THINGS, { body: nestedThing('flow', 501), headers: YAML }), 400, 'BadRequest', message)
    await refused(api, () => api.call('POST', THINGS, { body: nestedThing('flow', 200_000), headers: YAML }), 400, 'BadRequest', message)
  })

  it('refuses YAML whose aliases place a deep anchor deeper still', async () => {
    const api = await serverWithThings()
    const anchor = `${'['.repeat(300)}${']'.repeat(300)}`
    const body = `apiVersion: bounds.example.com/v1\nkind: Thing\nmetadata: {name: alias}\nspec:\n  a: &deep ${anchor}\n  b: ${'['.repeat(250)}*deep${']'.repeat(250)}\n`
    await refused(api, () => api.call('POST', THINGS, { body, headers: YAML }), 400, 'BadRequest', 'error converting YAML to JSON: yaml: exceeded max depth of 500')
  })

  it('refuses a YAML alias bomb (billion laughs) without expanding it', async () => {
    const api = await startServer()
    let body = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lol\nx0: &x0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    for (let i = 1; i < 10; i++) body += `x${i}: &x${i} [${Array(9).fill(`*x${i - 1}`).join(',')}]\n`
    await refused(
      api,
      () => api.call('POST', CM, { body, headers: YAML }),
      400,
      'BadRequest',
      'error converting YAML to JSON: yaml: document contains excessive aliasing',
    )
  })

  it('accepts a protobuf CustomResourceDefinition nesting under the limit and refuses one over it', async () => {
    const api = await startServer()
    const definition = (levels: number) => {
      let schema: Record<string, unknown> = { type: 'string' }
      for (let i = 0; i < levels; i++) schema = { type: 'object', properties: { a: schema } }
      return encodeProtobuf({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: `nested${levels}.bounds.example.com` },
        spec: {
          group: 'bounds.example.com',
          scope: 'Namespaced',
          names: { plural: `nested${levels}`, singular: `nested${levels}`, kind: `Nested${levels}` },
          versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }],
        },
      })
    }
    const headers = { 'content-type': 'application/vnd.kubernetes.protobuf' }
    // Each schema level is two levels of JSON (the schema, its properties) under six of the definition.
    const fits = await api.call('POST', CRDS, { body: definition(247), headers })
    assert.equal(fits.status, 201, fits.text.slice(0, 300))
    const before = (await api.get(CRDS)).body.items.length
    const over = await api.call('POST', CRDS, { body: definition(248), headers })
    assert.equal(over.status, 400)
    assert.equal(over.body.message, 'unable to decode protobuf body: exceeded max depth of 500')
    assert.equal((await api.get(CRDS)).body.items.length, before)
  })
})

describe('JSON patch', () => {
  async function withConfigMap(data: Record<string, string>): Promise<TestClient> {
    const api = await startServer()
    assert.equal((await api.post(CM, { metadata: { name: 'target' }, data })).status, 201)
    return api
  }

  it('applies 10000 operations and refuses 10001 with 413', async () => {
    const api = await withConfigMap({ a: 'b' })
    const op = { op: 'test', path: '/data/a', value: 'b' }
    const r = await api.patch(`${CM}/target`, [...Array(9999).fill(op), { op: 'add', path: '/data/c', value: 'd' }], JSON_PATCH)
    assert.equal(r.status, 200, r.text.slice(0, 300))
    assert.deepEqual(r.body.data, { a: 'b', c: 'd' })
    await refused(
      api,
      () => api.patch(`${CM}/target`, [...Array(10000).fill(op), { op: 'add', path: '/data/e', value: 'f' }], JSON_PATCH),
      413,
      'RequestEntityTooLarge',
      'Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001',
    )
  })

  it('copies up to 3 MiB in one patch and refuses more with 422', async () => {
    const api = await serverWithThings()
    const thing = { apiVersion: 'bounds.example.com/v1', kind: 'Thing', metadata: { name: 'target' }, spec: { a: 'x'.repeat(1024 * 1024 - 2) } }
    assert.equal((await api.post(THINGS, thing)).status, 201)
    const copy = (to: string) => ({ op: 'copy', from: '/spec/a', path: `/spec/${to}` })
    // A dry run: the 3 MiB it makes are more than etcd stores (1.5 MiB), which the copies' bound does not know of.
    const r = await api.patch(`${THINGS}/target?dryRun=All`, [copy('b'), copy('c')], JSON_PATCH)
    assert.equal(r.status, 200, r.text.slice(0, 300))
    assert.deepEqual(Object.keys(r.body.spec), ['a', 'b', 'c'])
    await refused(
      api,
      () => api.patch(`${THINGS}/target`, [copy('d'), copy('e'), copy('f'), copy('g')], JSON_PATCH),
      422,
      'Invalid',
      // Upstream's patch library stops at its copy budget; the answer, as for every patch that does not apply, says no more.
      'the server rejected our request due to an error in our request',
    )
  })

  it('refuses a doubling copy chain long before it can exhaust memory', async () => {
    const api = await serverWithThings()
    const thing = { apiVersion: 'bounds.example.com/v1', kind: 'Thing', metadata: { name: 'target' }, spec: { a: 'x'.repeat(1000) } }
    assert.equal((await api.post(THINGS, thing)).status, 201)
    // Each operation copies the whole spec into itself: 60 of them would need 2^60 KB.
    const ops = Array.from({ length: 60 }, (_, i) => ({ op: 'copy', from: '/spec', path: `/spec/c${i}` }))
    await refused(api, () => api.patch(`${THINGS}/target`, ops, JSON_PATCH), 422, 'Invalid', 'the server rejected our request due to an error in our request')
  })

  it('refuses a patch whose operations nest the object deeper than a body may', async () => {
    const api = await serverWithThings()
    assert.equal((await api.post(THINGS, nestedThing('grown', 300))).status, 201)
    const value = JSON.parse(`${'['.repeat(250)}${']'.repeat(250)}`) as unknown
    const path = `/spec/x${'/0'.repeat(296)}`
    await refused(
      api,
      () => api.patch(`${THINGS}/grown`, [{ op: 'add', path: `${path}/0`, value }], JSON_PATCH),
      422,
      'Invalid',
      'exceeded max depth of 500',
    )
  })

  it('refuses a merge patch nested past the limit with 400', async () => {
    const api = await withConfigMap({ a: 'b' })
    const patch = `{"metadata":{"annotations":${'['.repeat(600)}${']'.repeat(600)}}}`
    await refused(
      api,
      () => api.patch(`${CM}/target`, patch, 'application/merge-patch+json'),
      400,
      'BadRequest',
      "error decoding patch: invalid character '[' exceeded max depth",
    )
  })
})
