import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Hono } from 'hono'
import type { ChainEnv } from '../../../core/http/filters/context.js'
import { timeoutFilter } from '../../../core/http/filters/timeout.js'
import { parseRequestInfo } from '../../../core/machinery/request-info.js'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** A chain of the timeout filter alone, whose handler runs `handle` with the request's deadline. */
function chain(handle: (deadline: () => AbortSignal) => Promise<void>): Hono<ChainEnv> {
  const app = new Hono<ChainEnv>()
  app.use('*', async (c, next) => {
    c.set('requestInfo', parseRequestInfo(c.req.method, c.req.url))
    await next()
  })
  app.use('*', timeoutFilter(60_000))
  app.get('*', async (c) => {
    await handle(c.get('deadline')!)
    return c.text('done')
  })
  return app
}

describe('the request deadline', () => {
  it('aborts a signal asked for before the deadline once it passes, a turn after the 504', async () => {
    let signal: AbortSignal | undefined
    const app = chain(async (deadline) => {
      signal = deadline()
      await sleep(200)
    })
    const res = await app.request('/api/v1/namespaces?timeout=50ms')
    assert.equal(res.status, 504)
    assert.equal(signal!.aborted, false, 'aborted before the 504 went out')
    await sleep(10)
    assert.equal(signal!.aborted, true)
    assert.equal((signal!.reason as Error).message, 'context deadline exceeded')
  })

  it('gives a handler that asks only after the deadline passed a signal already aborted', async () => {
    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    let signal: AbortSignal | undefined
    let asked!: Promise<void>
    const app = chain(async (deadline) => {
      asked = released.then(() => {
        signal = deadline()
      })
      await asked
    })
    const res = await app.request('/api/v1/namespaces?timeout=50ms')
    assert.equal(res.status, 504)
    // The deadline's abort comes a turn after the 504; the handler asks only then.
    await sleep(10)
    release()
    await asked
    assert.equal(signal!.aborted, true)
  })

  it('leaves the signal alone for a request answered in time', async () => {
    let signal: AbortSignal | undefined
    const res = await chain(async (deadline) => {
      signal = deadline()
    }).request('/api/v1/namespaces?timeout=1s')
    assert.equal(res.status, 200)
    await sleep(10)
    assert.equal(signal!.aborted, false)
  })
})
