/**
 * YAML bodies decoded in the Node runtime's worker thread (nodeYamlDecoder)
 * get the answers the serving thread gives; and when the worker cannot
 * answer (its queue full, past its deadline, out of memory) the request gets
 * a Status and the server goes on serving, a dead worker replaced.
 */
import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { Lexer } from 'yaml'
import { YAML_WORKER_NICE } from '../../runtimes/node/daemon/background-threads.js'
import { type NodeYamlDecoder, nodeYamlDecoder, type NodeYamlDecoderOptions } from '../../runtimes/node/daemon/yaml-decoder.js'
import { createTestServer, TestClient } from './harness.js'

const CMS = '/api/v1/namespaces/default/configmaps'
const YAML = { 'content-type': 'application/yaml' }

const decoders: NodeYamlDecoder[] = []
after(async () => {
  await Promise.all(decoders.map((d) => d.close()))
})

async function clientWith(options: NodeYamlDecoderOptions): Promise<{ api: TestClient; decoder: NodeYamlDecoder }> {
  const decoder = nodeYamlDecoder(options)
  decoders.push(decoder)
  const server = createTestServer({}, { yamlDecoder: decoder })
  await server.ready
  return { api: new TestClient(server), decoder }
}

/** Quoted values: a map of plain ones is read without the worker (yaml-simple.ts), and these bodies are for the worker. */
function configMapYaml(name: string, keys: number): string {
  const data = Array.from({ length: keys }, (_, i) => `  key-${i}: "value-${i}"\n`).join('')
  return `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n${data}`
}

/** The same with plain values. */
function plainConfigMapYaml(name: string, keys: number): string {
  return configMapYaml(name, keys).replaceAll('"', '')
}

/** Bodies of every outcome the YAML decoder has: what the serving thread answers, the worker must too. */
const BODIES: Record<string, string> = {
  'a ConfigMap': configMapYaml('plain', 3),
  'a large ConfigMap': configMapYaml('large', 3000),
  'a large ConfigMap of plain values': plainConfigMapYaml('plain-large', 3000),
  'JSON text': JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'json' }, data: { a: 'b' } }),
  'JSON text with a key twice': '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "twice-json"}, "data": {"a": "1", "a": "2"}}',
  'a key twice': `${configMapYaml('twice', 2)}  key-0: again\n`,
  'a syntax error': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [broken\n',
  'two documents': `${configMapYaml('first', 1)}---\n${configMapYaml('second', 1)}`,
  'an alias bomb': `a: &a ["x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n`,
  'nesting past the limit': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\n  labels: ${'['.repeat(600)}${']'.repeat(600)}\n`,
  'an infinite number': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: inf\ndata:\n  a: .inf\n',
  'a large body with a number past float64': `${configMapYaml('past', 3000)}  big: 1e400\n`,
  'an unknown alias': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: *nothing\n',
  'a scalar': 'just text\n',
  'nothing but a comment': '# nothing\n',
}

/** What a client sees of an answer, without what differs from one server to another (uids, times). */
function seen(reply: { status: number; body: any }): unknown {
  if (reply.body?.kind === 'Status') return { status: reply.status, message: reply.body.message, reason: reply.body.reason }
  return { status: reply.status, name: reply.body?.metadata?.name, data: reply.body?.data }
}

describe('YAML bodies decoded in a worker thread', () => {
  it('are answered as on the serving thread: values, duplicate keys, refusals and their line numbers', async () => {
    const here = new TestClient(createTestServer())
    const { api: worker, decoder } = await clientWith({ offThreadFrom: 0 })
    for (const [what, body] of Object.entries(BODIES)) {
      for (const query of ['?fieldValidation=Strict', '?fieldValidation=Ignore']) {
        const expected = seen(await here.call('POST', `${CMS}${query}`, { body, headers: YAML }))
        const got = seen(await worker.call('POST', `${CMS}${query}`, { body, headers: YAML }))
        assert.deepEqual(got, expected, `${what} (${query})`)
      }
    }
    // A server-side apply's configuration and a DeleteOptions body take the same path.
    const apply = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  a: "1"\n'
    const applied = await worker.call('PATCH', `${CMS}/applied?fieldManager=test`, { body: apply, headers: { 'content-type': 'application/apply-patch+yaml' } })
    assert.equal(applied.status, 201, applied.text)
    const deleted = await worker.call('DELETE', `${CMS}/applied`, { body: 'dryRun: [All]\n', headers: YAML })
    assert.equal(deleted.status, 200, deleted.text)
    assert.equal((await worker.get(`${CMS}/applied`)).status, 200, 'a dry run deletes nothing')
    assert.equal(decoder.pending, 0)
  })

  it('answers 429 when its queue is full, and serves the bodies it took and the requests after', async () => {
    const { api, decoder } = await clientWith({ offThreadFrom: 0, maxQueued: 0 })
    const slow = api.call('POST', CMS, { body: configMapYaml('slow', 20_000), headers: YAML })
    // Bounded wait until the worker holds the slow body (it needs hundreds of milliseconds).
    for (let turns = 0; decoder.pending === 0 && turns < 100_000; turns++) await new Promise((resolve) => setImmediate(resolve))
    assert.equal(decoder.pending, 1, 'the slow body reached the worker')
    const refused = await api.call('POST', CMS, { body: configMapYaml('refused', 2), headers: YAML })
    assert.equal(refused.status, 429, refused.text)
    assert.equal(refused.body.reason, 'TooManyRequests')
    assert.equal(refused.headers.get('retry-after'), '1')
    assert.equal((await slow).status, 201)
    assert.equal((await api.call('POST', CMS, { body: configMapYaml('after', 2), headers: YAML })).status, 201)
    assert.equal(Object.keys((await api.get(`${CMS}/slow`)).body.data).length, 20_000)
  })

  it('answers 504 for a body past its deadline, stops the worker, and serves the next requests', async () => {
    // No worker loads within a millisecond: the first body's deadline passes whatever the machine's speed.
    const { api, decoder } = await clientWith({ offThreadFrom: 1024, timeoutMs: 1 })
    const late = await api.call('POST', CMS, { body: configMapYaml('late', 100), headers: YAML })
    assert.equal(late.status, 504, late.text)
    assert.equal(late.body.reason, 'Timeout')
    assert.equal(late.body.message, 'Timeout: request did not complete within requested timeout - context deadline exceeded')
    assert.equal(decoder.pending, 0)
    assert.equal((await api.call('POST', CMS, { body: configMapYaml('small', 2), headers: YAML })).status, 201, 'a small body stays on the serving thread')
    assert.equal((await api.get(`${CMS}/small`)).status, 200)
    assert.equal((await api.get(`${CMS}/late`)).status, 404)
  })

  it('decodes a small body with aliases in the worker too: aliases expand to work out of proportion to the text', async () => {
    // As above, a deadline no worker meets tells where a body went: 504 from the worker, an answer from the serving thread.
    const { api } = await clientWith({ timeoutMs: 1 })
    const aliased = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: &n aliased\ndata:\n  a: *n\n'
    assert.ok(aliased.length < 1024)
    assert.equal((await api.call('POST', CMS, { body: aliased, headers: YAML })).status, 504)
    assert.equal((await api.call('POST', CMS, { body: configMapYaml('no-alias', 2), headers: YAML })).status, 201)
  })

  it('refuses a body with anchors and an infinite number in the worker alone, not decoding it again on the serving thread', async () => {
    const { api, decoder } = await clientWith({})
    // Anchors send the body to the worker whatever its size, and make it a document composed in one piece:
    // decoded again on the serving thread, 100,000 keys held it for most of a second.
    const body = `${configMapYaml('anchored', 100_000).replace('data:\n', 'data: &all\n')}  big: .inf\n`
    let lexedHere = 0
    const lex = Lexer.prototype.lex
    Lexer.prototype.lex = function* (...args: Parameters<typeof lex>) {
      lexedHere++
      yield* lex.apply(this, args)
    }
    let refused
    try {
      refused = await api.call('POST', CMS, { body, headers: YAML })
    } finally {
      Lexer.prototype.lex = lex
    }
    assert.equal(refused.status, 400, refused.text.slice(0, 300))
    assert.equal(refused.body.message, 'error converting YAML to JSON: json: unsupported value: +Inf')
    assert.equal(lexedHere, 0, 'the serving thread lexed the body')
    assert.equal(decoder.pending, 0)
    assert.equal((await api.get(`${CMS}/anchored`)).status, 404)
  })

  it('reads a map of plain keys and values on the serving thread, however large: no worker needed', async () => {
    // A deadline no worker meets: a body that went to the worker would get 504.
    const { api, decoder } = await clientWith({ offThreadFrom: 0, timeoutMs: 1 })
    const reply = await api.call('POST', CMS, { body: plainConfigMapYaml('plain', 20_000), headers: YAML })
    assert.equal(reply.status, 201, reply.text.slice(0, 300))
    assert.equal(Object.keys(reply.body.data).length, 20_000)
    assert.equal(reply.body.data['key-19999'], 'value-19999')
    assert.equal(decoder.pending, 0)
  })

  it('runs the worker at a lower scheduling priority than the serving thread (Linux)', { skip: process.platform !== 'linux' }, async () => {
    const { readdir, readFile } = await import('node:fs/promises')
    // Field 19 of a thread's stat line is its nice value; the fields start after the command's closing parenthesis.
    // A thread may end between the listing and the read: it has no nice value then.
    const niceIn = async (stat: string) => Number((await readFile(stat, 'utf8').catch(() => ') ')).split(') ')[1]!.split(' ')[16])
    assert.ok((await niceIn('/proc/thread-self/stat')) < YAML_WORKER_NICE, 'the test runs above the background priority')
    const lowered = async () => (await Promise.all((await readdir('/proc/self/task')).map((t) => niceIn(`/proc/self/task/${t}/stat`)))).filter((nice) => nice >= YAML_WORKER_NICE).length
    const before = await lowered()
    const { api } = await clientWith({ offThreadFrom: 0 })
    assert.equal((await api.call('POST', CMS, { body: configMapYaml('niced', 2), headers: YAML })).status, 201)
    assert.equal(await lowered(), before + 1, 'one more thread runs at the background priority: the new worker')
  })

  it('answers 500 for a body that runs the worker out of memory, and decodes the next one in a new worker', async () => {
    const { api, decoder } = await clientWith({ offThreadFrom: 0, maxHeapMb: 16 })
    const huge = await api.call('POST', CMS, { body: configMapYaml('huge', 60_000), headers: YAML })
    assert.equal(huge.status, 500, huge.text)
    assert.equal(huge.body.reason, 'InternalError')
    assert.match(huge.body.message, /^Internal error occurred: decoding the YAML body: .*memory/)
    const next = await api.call('POST', CMS, { body: configMapYaml('next', 2), headers: YAML })
    assert.equal(next.status, 201, next.text)
    assert.deepEqual(next.body.data, { 'key-0': 'value-0', 'key-1': 'value-1' })
    assert.equal(decoder.pending, 0)
  })
})
