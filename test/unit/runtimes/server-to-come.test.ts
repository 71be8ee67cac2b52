import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { serverToCome } from '../../../runtimes/node/daemon/server-to-come.js'

const ask = (path: string) => new Request(`https://127.0.0.1${path}`)
const answering = (text: string) => ({ fetch: async (request: Request) => new Response(`${text} ${new URL(request.url).pathname}`) })

describe('the handler of a listener opened before start-up is through', () => {
  it('holds requests until the server serves, then hands them to it', async () => {
    const toCome = serverToCome(10)
    let answered = false
    const first = toCome.fetch(ask('/healthz')).then((r) => ((answered = true), r))
    await new Promise((resolve) => setTimeout(resolve, 20))
    assert.equal(answered, false)
    toCome.serve(answering('served'))
    assert.equal(await (await first).text(), 'served /healthz')
    assert.equal(await (await toCome.fetch(ask('/api'))).text(), 'served /api')
  })

  it('answers 429 beyond the requests it may hold, none of which reach the server unauthenticated meanwhile', async () => {
    const toCome = serverToCome(2)
    const held = [toCome.fetch(ask('/a')), toCome.fetch(ask('/b'))]
    const refused = await toCome.fetch(ask('/c'))
    assert.equal(refused.status, 429)
    assert.equal(refused.headers.get('retry-after'), '1')
    assert.equal(((await refused.json()) as { reason: string }).reason, 'TooManyRequests')
    toCome.serve(answering('served'))
    assert.deepEqual(await Promise.all(held.map(async (r) => (await r).text())), ['served /a', 'served /b'])
    // Once serving, the bound no longer applies: the server's own limits do.
    const many = await Promise.all(Array.from({ length: 5 }, (_, i) => toCome.fetch(ask(`/${i}`))))
    assert.deepEqual(many.map((r) => r.status), [200, 200, 200, 200, 200])
  })

  it('refuses with 503 what waited for a start-up that failed, and every later request', async () => {
    const toCome = serverToCome(10)
    const waiting = toCome.fetch(ask('/api/v1/namespaces'))
    toCome.refuse()
    for (const response of [await waiting, await toCome.fetch(ask('/healthz'))]) {
      assert.equal(response.status, 503)
      assert.equal(((await response.json()) as { reason: string }).reason, 'ServiceUnavailable')
    }
  })
})
