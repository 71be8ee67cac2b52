import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { base64DecodeStrict } from '../../../core/machinery/base64.js'

describe("base64DecodeStrict (Go's StdEncoding)", () => {
  it('decodes padded standard base64, skipping line breaks', () => {
    assert.deepEqual([...base64DecodeStrict('YWI=')], [97, 98])
    assert.deepEqual([...base64DecodeStrict('YW\r\nJj')], [97, 98, 99])
    assert.deepEqual([...base64DecodeStrict('')], [])
  })

  const refused: [string, number][] = [
    ['YWI', 0], // missing padding
    ['YQ=', 2], // half the padding
    ['Y===', 1], // padding too early
    ['YQ==YQ==', 4], // data after the padding
    ['YW Jj', 2], // a space
    ['YW-J', 2], // the URL alphabet
  ]
  for (const [text, offset] of refused) {
    it(`refuses ${JSON.stringify(text)} at input byte ${offset}`, () => {
      assert.throws(() => base64DecodeStrict(text), { name: 'Base64Error', message: `illegal base64 data at input byte ${offset}` })
    })
  }
})
