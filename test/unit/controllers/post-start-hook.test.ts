import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { postStartHook } from '../../../core/controllers/post-start-hook.js'
import type { Logger } from '../../../core/logging/logger.js'

describe('a post-start hook whose work fails', () => {
  it('settles its first run without throwing, reports not finished, logs, and is finished once a retry succeeds', async () => {
    const warnings: string[] = []
    const logger: Logger = { debug() {}, info() {}, warn: (_fields: unknown, msg?: string) => void warnings.push(String(msg)), error() {} }
    let calls = 0
    let secondCall!: () => void
    const retried = new Promise<void>((resolve) => (secondCall = resolve))
    const hook = postStartHook(
      'example',
      async () => {
        calls++
        if (calls === 1) throw new Error('forbidden')
        secondCall()
      },
      logger,
      { firstDelayMs: 0, maxDelayMs: 0 },
    )
    await hook.run()
    assert.equal(hook.check.name, 'poststarthook/example')
    assert.throws(() => hook.check.check(), /not finished/)
    assert.deepEqual(warnings, ['start-up work failed; trying again later'])
    await retried
    await Promise.resolve()
    assert.doesNotThrow(() => hook.check.check())
    assert.equal(calls, 2)
  })

  it('tries no more once stopped', async () => {
    let calls = 0
    const logger: Logger = { debug() {}, info() {}, warn() {}, error() {} }
    const hook = postStartHook(
      'stopped',
      async () => {
        calls++
        throw new Error('forbidden')
      },
      logger,
      { firstDelayMs: 0, maxDelayMs: 0 },
    )
    await hook.run()
    hook.stop()
    // A timer set after the retry's would fire after it: the retry, had it stayed, would have run by then.
    await new Promise((resolve) => setTimeout(resolve, 1))
    assert.equal(calls, 1)
    assert.throws(() => hook.check.check(), /not finished/)
  })
})
