import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { SLICE_BUDGET_MS, TimeSlice, yieldToEventLoop } from '../../../core/machinery/time-slice.js'

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

describe('one slice per turn of the event loop, whichever request it is for', () => {
  it('resumes one of several sliced requests per turn, in turn', async () => {
    const log: string[] = []
    let probing = true
    // A macrotask that queues itself again marks each turn of the event loop.
    const probe = () => {
      log.push('turn')
      if (probing) setImmediate(probe)
    }
    setImmediate(probe)
    // A budget of 0 is always spent: every checkpoint yields.
    const request = async (name: string) => {
      const slice = new TimeSlice(0)
      for (let step = 0; step < 3; step++) {
        await slice.pause()
        log.push(name)
      }
    }
    await Promise.all([request('a'), request('b'), request('c')])
    probing = false
    const resumes = log.filter((entry) => entry !== 'turn')
    assert.equal(resumes.join(''), 'abcabcabc', 'in turn')
    // Between two turns, at most one request resumed.
    const perTurn = log.join(' ').split('turn').map((between) => between.trim()).filter(Boolean)
    assert.ok(perTurn.every((between) => between.length === 1), log.join(' '))
  })

  it('a later step of the same request, begun in the same turn, shares the slice the earlier one began', async () => {
    await yieldToEventLoop()
    const end = performance.now() + SLICE_BUDGET_MS * 1.2
    while (performance.now() < end) {
      // the earlier step uses the whole budget without checking
    }
    assert.equal(new TimeSlice().spent, true, 'a new step begun in the same turn finds the budget spent')
    await yieldToEventLoop()
    assert.equal(new TimeSlice(10_000).spent, false, 'after a yield, a new slice begins')
  })
})
