/**
 * JSON text written in steps (raw JSON inside a protobuf message of
 * megabytes): the same text JSON.stringify writes, odd values included.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { jsonTextInSteps } from '../../../core/machinery/json-text.js'
import { runCounting } from '../../fixtures/checkpoints.js'

function stepped(value: unknown): { text: string | undefined; checkpoints: number } {
  const { value: text, checkpoints } = runCounting(jsonTextInSteps(value))
  return { text, checkpoints }
}

describe('JSON text in steps', () => {
  it('is what JSON.stringify writes, for odd values and keys', () => {
    const bare = Object.assign(Object.create(null) as object, { k: 1 })
    const values: unknown[] = [
      undefined,
      null,
      0,
      -0,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      1e21,
      'text "quoted" \\ \u2028 \ud800 \u0001',
      true,
      [],
      {},
      [undefined, () => 1, Symbol('s'), null, { gone: undefined, fn: () => 1, sym: Symbol('t') }],
      { '10': 1, '9': 2, b: 3, a: 4, __proto__x: 5, '\u{1F600}': [1, [2, [3]]] },
      { when: new Date(0), own: { toJSON: (key: string) => `told ${key}` }, boxed: new String('s'), bare },
      { nested: { deeper: { list: [{ a: 1 }, { b: [true, false] }] } } },
    ]
    for (const value of values) assert.equal(stepped(value).text, JSON.stringify(value), String(JSON.stringify(value)))
  })

  it('writes a level of many keys and a long list with checkpoints between', () => {
    const wide = { 'f:data': Object.fromEntries(Array.from({ length: 30_000 }, (_, i) => [`f:k${i}`, {}])), list: Array.from({ length: 10_000 }, (_, i) => i) }
    const { text, checkpoints } = stepped(wide)
    assert.equal(text, JSON.stringify(wide))
    assert.ok(checkpoints >= 9, `${checkpoints} checkpoints`)
  })
})
