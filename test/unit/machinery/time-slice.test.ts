import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { yieldToEventLoop } from '../../../core/machinery/time-slice.js'

describe('yielding to the event loop between slices', () => {
  it('lets work already queued as a macrotask run before the slice resumes', async () => {
    const order: string[] = []
    setImmediate(() => order.push('queued request'))
    await yieldToEventLoop()
    order.push('slice resumed')
    assert.deepEqual(order, ['queued request', 'slice resumed'])
  })

  it('yields through a MessageChannel where the runtime has no setImmediate', async () => {
    const global = globalThis as { setImmediate?: unknown }
    const saved = global.setImmediate
    delete global.setImmediate
    let timer: ReturnType<typeof setTimeout> | undefined
    try {
      const never = new Promise<string>((resolve) => {
        timer = setTimeout(() => resolve('still waiting after 5 s'), 5000)
      })
      assert.equal(await Promise.race([yieldToEventLoop().then(() => 'resumed'), never]), 'resumed')
    } finally {
      clearTimeout(timer)
      global.setImmediate = saved
    }
  })
})
