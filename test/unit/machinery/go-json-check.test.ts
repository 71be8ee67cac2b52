import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { goJsonObjectError, goQuotedByte } from '../../../core/machinery/go-json-check.js'

const check = (text: string | Uint8Array) => goJsonObjectError(typeof text === 'string' ? new TextEncoder().encode(text) : text)

describe("Go's json.Unmarshal into a map, its errors", () => {
  it('accepts objects and null, with any spacing and nesting', () => {
    for (const ok of ['{}', ' { "a" : [1, -0.5e+3, "x\\u00e9\\n", true, false, null, {}] } ', 'null', '\n{"a":{"b":[[]]}}\t']) {
      assert.equal(check(ok), undefined, ok)
    }
  })

  it('reports the first syntax error in the scanner words', () => {
    const cases: [string, string][] = [
      ['', 'unexpected end of JSON input'],
      ['   ', 'unexpected end of JSON input'],
      ['{', 'unexpected end of JSON input'],
      ['{"a"', 'unexpected end of JSON input'],
      ['"abc', 'unexpected end of JSON input'],
      ['abc', "invalid character 'a' looking for beginning of value"],
      ['{a}', "invalid character 'a' looking for beginning of object key string"],
      ['{"a",}', "invalid character ',' after object key"],
      ['{"a":1 "b"}', `invalid character '"' after object key:value pair`],
      ['[1 2]', "invalid character '2' after array element"],
      ['{} {}', "invalid character '{' after top-level value"],
      ['{"a":1}}', "invalid character '}' after top-level value"],
      ['{"a":"\\x"}', "invalid character 'x' in string escape code"],
      ['{"a":"\\u12g4"}', "invalid character 'g' in \\u hexadecimal character escape"],
      ['{"a":"x\ty"}', "invalid character '\\t' in string literal"],
      ['{"a":-x}', "invalid character 'x' in numeric literal"],
      ['{"a":1.}', "invalid character '}' after decimal point in numeric literal"],
      ['{"a":1e}', "invalid character '}' in exponent of numeric literal"],
      ['{"a":01}', "invalid character '1' after object key:value pair"],
      ['{"a":nul}', "invalid character '}' in literal null (expecting 'l')"],
      ['tru', "invalid character ' ' in literal true (expecting 'e')"],
      ['fals', "invalid character ' ' in literal false (expecting 'e')"],
      ["'a'", "invalid character '\\'' looking for beginning of value"],
      ['{"a":1,}', "invalid character '}' looking for beginning of object key string"],
      ['[1,]', "invalid character ']' looking for beginning of value"],
    ]
    for (const [text, error] of cases) assert.equal(check(text), error, text)
  })

  it('names a byte that is not ASCII as the Latin-1 character of its code', () => {
    assert.equal(check(new Uint8Array([0xef, 0xbb, 0xbf, 0x7b, 0x7d])), "invalid character 'ï' looking for beginning of value")
    assert.equal(goQuotedByte(0x00), "'\\x00'")
    assert.equal(goQuotedByte(0x7f), "'\\x7f'")
    assert.equal(goQuotedByte(0x85), "'\\u0085'")
    assert.equal(goQuotedByte(0xa0), "'\\u00a0'")
    assert.equal(goQuotedByte(0x5c), "'\\\\'")
    assert.equal(goQuotedByte(0x22), `'"'`)
  })

  it('refuses a valid value that is not an object as a type error', () => {
    assert.equal(check('[]'), 'json: cannot unmarshal array into Go value of type map[string]interface {}')
    assert.equal(check(' "x" '), 'json: cannot unmarshal string into Go value of type map[string]interface {}')
    assert.equal(check('-1.5e3'), 'json: cannot unmarshal number into Go value of type map[string]interface {}')
    assert.equal(check('true'), 'json: cannot unmarshal bool into Go value of type map[string]interface {}')
  })

  it("stops past Go's depth limit", () => {
    assert.equal(check('['.repeat(10001)), "invalid character '[' exceeded max depth")
    assert.equal(check('['.repeat(10000)), 'unexpected end of JSON input')
  })
})
