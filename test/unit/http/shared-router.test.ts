import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Hono } from 'hono'
import { routeTableMatchers, SharedRouter } from '../../../core/http/shared-router.js'

/** An app as the filter chain builds one: a middleware on every path, then routes; each answer names its app. */
function app(name: string, extraRoute?: string): Hono {
  const a = new Hono({ router: new SharedRouter() })
  a.use(async (c, next) => {
    await next()
    c.res.headers.set('x-app', name)
  })
  a.get('/version', (c) => c.text(`${name} version`))
  a.get('/apis/:group/:version', (c) => c.text(`${name} ${c.req.param('group')}/${c.req.param('version')}`))
  a.all('/api/*', (c) => c.text(`${name} ${c.req.method} ${c.req.path}`))
  if (extraRoute) a.get(extraRoute, (c) => c.text(`${name} extra`))
  a.notFound((c) => c.text(`${name} not found`, 404))
  return a
}

async function answer(a: Hono, method: string, path: string): Promise<[number, string, string | null]> {
  const res = await a.fetch(new Request(`http://in-process${path}`, { method }))
  return [res.status, await res.text(), res.headers.get('x-app')]
}

describe('route tables shared by apps registered alike', () => {
  it('answers each request with its own app\'s handlers, parameters and not-found', async () => {
    const one = app('one')
    const two = app('two')
    for (const [a, name] of [[one, 'one'], [two, 'two'], [one, 'one']] as const) {
      assert.deepEqual(await answer(a, 'GET', '/version'), [200, `${name} version`, name])
      assert.deepEqual(await answer(a, 'GET', '/apis/apps/v1'), [200, `${name} apps/v1`, name])
      assert.deepEqual(await answer(a, 'POST', '/api/v1/namespaces/default/pods'), [200, `${name} POST /api/v1/namespaces/default/pods`, name])
      assert.deepEqual(await answer(a, 'GET', '/nowhere'), [404, `${name} not found`, name])
    }
  })

  it('matches as an app with hono\'s own router does', async () => {
    const own = new Hono()
    own.get('/apis/:group/:version', (c) => c.text(`${c.req.param('group')}/${c.req.param('version')}`))
    own.all('/api/*', (c) => c.text(c.req.path))
    const shared = new Hono({ router: new SharedRouter() })
    shared.get('/apis/:group/:version', (c) => c.text(`${c.req.param('group')}/${c.req.param('version')}`))
    shared.all('/api/*', (c) => c.text(c.req.path))
    for (const [method, path] of [['GET', '/apis/apps/v1'], ['GET', '/apis/apps'], ['DELETE', '/api/v1/x'], ['GET', '/api'], ['HEAD', '/api/v1'], ['GET', '/apis/a/b/c']]) {
      const [a, b] = await Promise.all([own, shared].map((x) => x.fetch(new Request(`http://in-process${path}`, { method }))))
      assert.equal(b!.status, a!.status, `${method} ${path}`)
      assert.equal(await b!.text(), await a!.text(), `${method} ${path}`)
    }
  })

  it('keeps apps with different routes apart', async () => {
    const plain = app('plain')
    const extra = app('extra', '/extra')
    assert.deepEqual(await answer(extra, 'GET', '/extra'), [200, 'extra extra', 'extra'])
    assert.deepEqual(await answer(plain, 'GET', '/extra'), [404, 'plain not found', 'plain'])
  })

  it('compiles a table once for every app that registers it, and keeps a table that differs in one path apart', async () => {
    const before = routeTableMatchers().length
    assert.deepEqual(await answer(app('first', '/alike'), 'GET', '/alike'), [200, 'first extra', 'first'])
    assert.equal(routeTableMatchers().length, before + 1)
    assert.deepEqual(await answer(app('second', '/alike'), 'GET', '/alike'), [200, 'second extra', 'second'])
    assert.equal(routeTableMatchers().length, before + 1, 'the same table again')
    const other = app('other', '/unlike')
    assert.deepEqual(await answer(other, 'GET', '/unlike'), [200, 'other extra', 'other'])
    assert.deepEqual(await answer(other, 'GET', '/alike'), [404, 'other not found', 'other'])
    assert.equal(routeTableMatchers().length, before + 2)
  })

  it('refuses a route added after the first request, as hono\'s routers do', async () => {
    const a = app('late')
    await answer(a, 'GET', '/version')
    assert.throws(() => a.get('/later', (c) => c.text('later')), /already built/)
  })
})
