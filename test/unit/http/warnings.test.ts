/**
 * The Warning headers an answer carries, as upstream's warning recorder
 * writes them: each text once and in order, then past 4096 characters every
 * text cut to 256, and texts past the budget again left out.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { recordedWarnings, WARNING_ITEM_CHARACTERS, WARNING_TOTAL_CHARACTERS, warningHeaderValue, withWarnings } from '../../../core/http/warnings.js'

describe('warning headers', () => {
  it('writes each text once, in the order given, leaving out empty ones', () => {
    assert.deepEqual(recordedWarnings(['b', 'a', '', 'b', 'c', 'a']), ['b', 'a', 'c'])
  })

  it('keeps texts whole while they fit in the budget', () => {
    const texts = Array.from({ length: 4 }, (_, i) => `${i}`.padEnd(1000, 'x'))
    assert.deepEqual(recordedWarnings(texts), texts)
  })

  it('past the budget, writes every text again cut to 256 characters, counting characters rather than bytes', () => {
    const long = (c: string) => c.repeat(1500)
    const out = recordedWarnings([long('a'), long('é'), long('b'), 'short'])
    assert.deepEqual(out, ['a', 'é', 'b'].map((c) => c.repeat(WARNING_ITEM_CHARACTERS)).concat('short'))
  })

  it('leaves out what comes once the budget is spent again, cut texts and all', () => {
    const texts = Array.from({ length: 40 }, (_, i) => `${i}:`.padEnd(300, 'y'))
    const out = recordedWarnings(texts)
    const total = out.reduce((n, t) => n + t.length, 0)
    assert.ok(out.every((t) => t.length <= WARNING_ITEM_CHARACTERS))
    assert.ok(total >= WARNING_TOTAL_CHARACTERS && total < WARNING_TOTAL_CHARACTERS + WARNING_ITEM_CHARACTERS, `${total}`)
    assert.ok(out.length < texts.length)
    assert.deepEqual(out, texts.slice(0, out.length).map((t) => t.slice(0, WARNING_ITEM_CHARACTERS)))
  })

  it('writes each as a 299 warning with the text quoted, beyond Latin-1 as its UTF-8 bytes', () => {
    const res = withWarnings(new Response(null), ['unknown field "spec.x"', 'naïve'])
    assert.equal(res.headers.get('warning'), `299 - "unknown field \\"spec.x\\"", 299 - "${Buffer.from('naïve').toString('latin1')}"`)
  })

  it("quotes as Go's makeQuotedString does (only \" and \\ escaped), a CR or LF a space as Go's header writer makes it, and no byte a header may not carry", () => {
    assert.equal(warningHeaderValue('a\\b "c"'), '299 - "a\\\\b \\"c\\""')
    assert.equal(warningHeaderValue('tab\there'), '299 - "tab\there"')
    assert.equal(warningHeaderValue('line\r\nbreak'), '299 - "line  break"')
    assert.equal(warningHeaderValue('del\x7f nul\x00 bell\x07'), '299 - "del  nul  bell "')
    // What Node refuses in a header value (its own check, as it writes headers): none of it is left.
    for (const text of ['\x7f', '\x00', '\x1b[31m', '\r\n\r\nHTTP/1.1 200 OK']) {
      assert.doesNotMatch(warningHeaderValue(text), /[^\t\x20-\x7e\x80-\xff]/, JSON.stringify(text))
    }
  })
})
