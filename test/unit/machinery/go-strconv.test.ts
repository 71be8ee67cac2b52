import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { GoNumError, goStrconvQuote, parseGoInt64, parseGoUint64 } from '../../../core/machinery/go-strconv.js'

const refusal = (f: () => unknown): string => {
  try {
    f()
  } catch (err) {
    assert.ok(err instanceof GoNumError)
    return err.message
  }
  return 'accepted'
}

describe('Go strconv', () => {
  it('reads int64 and uint64 to their last digit, past 2^53', () => {
    assert.equal(parseGoInt64('9223372036854775807'), 2n ** 63n - 1n)
    assert.equal(parseGoInt64('-9223372036854775808'), -(2n ** 63n))
    assert.equal(parseGoInt64('+007'), 7n)
    assert.equal(parseGoUint64('18446744073709551615'), 2n ** 64n - 1n)
    assert.equal(parseGoUint64('9007199254740993'), 9007199254740993n)
  })

  it('refuses as Go does: syntax at the first stray byte, range once the value overflows', () => {
    assert.equal(refusal(() => parseGoInt64('9223372036854775808')), 'strconv.ParseInt: parsing "9223372036854775808": value out of range')
    assert.equal(refusal(() => parseGoInt64('-9223372036854775809')), 'strconv.ParseInt: parsing "-9223372036854775809": value out of range')
    assert.equal(refusal(() => parseGoInt64('99999999999999999999x')), 'strconv.ParseInt: parsing "99999999999999999999x": value out of range')
    assert.equal(refusal(() => parseGoInt64('1x99999999999999999999')), 'strconv.ParseInt: parsing "1x99999999999999999999": invalid syntax')
    assert.equal(refusal(() => parseGoInt64('')), 'strconv.ParseInt: parsing "": invalid syntax')
    assert.equal(refusal(() => parseGoInt64('-')), 'strconv.ParseInt: parsing "-": invalid syntax')
    assert.equal(refusal(() => parseGoInt64('1_000')), 'strconv.ParseInt: parsing "1_000": invalid syntax')
    assert.equal(refusal(() => parseGoInt64('a"\\\n\x01')), 'strconv.ParseInt: parsing "a\\"\\\\\\n\\x01": invalid syntax')
    assert.equal(refusal(() => parseGoUint64('18446744073709551616')), 'strconv.ParseUint: parsing "18446744073709551616": value out of range')
    assert.equal(refusal(() => parseGoUint64('+1')), 'strconv.ParseUint: parsing "+1": invalid syntax')
  })

  it('quotes as strconv.Quote: what unicode.IsPrint refuses escaped, other text as it is', () => {
    // Printable beyond ASCII (letters, marks, symbols, an emoji) as it is, as Go's Quote keeps it.
    assert.equal(goStrconvQuote('é😀日本\u0301€'), '"é😀日本\u0301€"')
    // ASCII's controls and DEL as \x, the short escapes by name.
    assert.equal(goStrconvQuote('a\x00\x1b\x7f\x07\b\f\v'), '"a\\x00\\x1b\\x7f\\a\\b\\f\\v"')
    // Spaces other than U+0020, format characters, C1 controls, private use and unassigned code points: \u.
    assert.equal(goStrconvQuote('a\u00a0b\u200bc\u00adz\u0085\ue000\u2028'), '"a\\u00a0b\\u200bc\\u00adz\\u0085\\ue000\\u2028"')
    assert.equal(goStrconvQuote('\u0378'), '"\\u0378"')
    // Past U+FFFF: \U with eight digits (a format character, a private-use one).
    assert.equal(goStrconvQuote('\u{e0001}\u{f0000}'), '"\\U000e0001\\U000f0000"')
    // A lone surrogate is U+FFFD in Go's string, which it prints.
    assert.equal(goStrconvQuote('a\ud800b'), '"a\ufffdb"')
    assert.equal(goStrconvQuote(' "\\'), '" \\"\\\\"')
  })
})
