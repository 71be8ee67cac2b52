import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { DroppedRequests, MAX_RETRY_AFTER } from '../../../core/flowcontrol/dropped-requests.js'

/** A tracker on a clock the test sets, in whole seconds. */
function tracker() {
  let second = 1_000_000
  const drops = new DroppedRequests(() => second * 1000)
  return {
    at(s: number) {
      second = 1_000_000 + s
    },
    /** `count` refusals of `level` now; the Retry-After of the last. */
    refuse(count = 1, level = 'workload-low'): number {
      let retryAfter = 0
      for (let i = 0; i < count; i++) retryAfter = drops.refuse(level)
      return retryAfter
    },
  }
}

describe('the Retry-After of requests priority and fairness refuses', () => {
  it('asks for 1 second at first, and for as long while a level refuses fewer than three a second', () => {
    const t = tracker()
    assert.equal(t.refuse(), 1)
    for (let s = 1; s < 10; s++) {
      t.at(s)
      assert.equal(t.refuse(2), 1)
    }
  })

  it('doubles once a second of at least three refusals is over, waits its new value before the next rise, and stops at 32', () => {
    const t = tracker()
    t.at(10)
    assert.equal(t.refuse(3), 1, 'the figure changes only when a new second begins')
    t.at(11)
    assert.equal(t.refuse(), 2)
    t.refuse(5)
    t.at(12)
    assert.equal(t.refuse(), 2, 'a second after a rise is too soon for the next')
    t.at(13)
    assert.equal(t.refuse(), 4, 'seconds 11 and 12 refused 7, at least 3 × 2')
    let retryAfter = 4
    for (let s = 14; s < 200; s++) {
      t.at(s)
      retryAfter = t.refuse(200)
    }
    assert.equal(retryAfter, MAX_RETRY_AFTER)
  })

  it('comes down one second at a time once fewer refusals than its value came in its last seconds', () => {
    const t = tracker()
    t.at(1)
    t.refuse(3)
    t.at(2)
    t.refuse(6)
    t.at(3)
    t.refuse(6)
    t.at(5)
    assert.equal(t.refuse(), 4)
    t.at(30)
    assert.equal(t.refuse(), 3, 'nothing refused in the four seconds before')
    t.at(31)
    assert.equal(t.refuse(), 2)
    t.at(32)
    assert.equal(t.refuse(), 2, 'seconds 30 and 31 refused 2, not fewer than 2')
    t.at(40)
    assert.equal(t.refuse(), 1)
  })

  it('keeps each priority level apart', () => {
    const t = tracker()
    t.refuse(10, 'busy')
    t.at(1)
    assert.equal(t.refuse(1, 'busy'), 2)
    assert.equal(t.refuse(1, 'quiet'), 1)
  })
})
